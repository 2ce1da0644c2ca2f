import { e2eServer, expect, expectNoReload, markNoReload, submitSpec, test } from './fixtures';

/** The jobs list, open in a second page, shows a job appear and change status live. */
test('jobs list in a second page: a new job appears and turns Succeeded live, no reload', async ({ app: page, context }) => {
  const { url } = e2eServer();
  const name = `list-live-${Date.now()}`;
  // Narrowed to this test's jobs: another spec file's jobs may arrive meanwhile (a page of 50).
  const list = await context.newPage();
  await list.goto(`${url}/?q=${name}`);
  await expect(list.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await markNoReload(list);

  // The first page submits from the New job page (same browser session).
  await page.goto(`${url}/jobs/new`);
  await page.locator('.cm-content').click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText(`name: ${name}\nrun: |\n  echo started\n  sleep 4\n  echo finished\n`);
  await expect(page.getByTestId('validity')).toHaveText('✓ Valid spec');
  await page.getByTestId('submit-job').click();
  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  const id = Number(new URL(page.url()).pathname.split('/').pop());

  const row = list.locator(`tr[data-job-id="${id}"]`);
  await expect(row).toContainText(name);
  await expect(row.locator('[data-status]')).toHaveAttribute('data-status', /PENDING|STARTING|RUNNING/);
  await expect(row.locator('[data-status]')).toHaveAttribute('data-status', 'RUNNING');
  await expect(row.locator('[data-status]')).toHaveAttribute('data-status', 'SUCCEEDED');
  await expect(row).toContainText('1/1');
  await expectNoReload(list);

  // The filter chips and search narrow the list; a job created by the API appears too.
  const other = await submitSpec(`name: ${name}-api\nrun: exit 3\n`);
  await expect(list.locator(`tr[data-job-id="${other}"] [data-status]`)).toHaveAttribute('data-status', 'FAILED');
  await list.getByRole('button', { name: 'Failed', exact: true }).click();
  await expect(list.locator(`tr[data-job-id="${other}"]`)).toBeVisible();
  await expect(list.locator(`tr[data-job-id="${id}"]`)).toHaveCount(0);
  await list.getByRole('button', { name: 'All', exact: true }).click();
  await list.getByRole('searchbox', { name: 'Search jobs by name or ID' }).fill(`${name}-api`);
  await expect(list.locator(`tr[data-job-id="${other}"]`)).toBeVisible();
  await expect(list.locator(`tr[data-job-id="${id}"]`)).toHaveCount(0);
  await expectNoReload(list);
});

test('bulk select and cancel from the jobs list', async ({ app: page }) => {
  const stamp = Date.now();
  const ids = await Promise.all([1, 2].map((i) => submitSpec(`name: bulk-${stamp}-${i}\nrun: sleep 300\n`)));
  await page.goto(`${e2eServer().url}/?q=bulk-${stamp}`);
  for (const id of ids) {
    await expect(page.locator(`tr[data-job-id="${id}"] [data-status]`)).toHaveAttribute('data-status', 'RUNNING');
    await page.getByRole('checkbox', { name: `Select job ${id}` }).check();
  }
  await expect(page.getByRole('region', { name: 'Selection' })).toContainText('2 selected');
  await page.getByRole('button', { name: /Cancel selected/ }).click();
  // The server ends both in well under a second. Rows once stuck here were list fetches answering
  // after the stream's update with an older read (lib/ui/list-cache.ts mergeFetchedPage replays
  // what came meanwhile), and a job being cancelled that the reconcile pass stepped only on its
  // every-30th full pass (lib/monitor/monitor.ts now steps every job with a cancel under way).
  for (const id of ids) await expect(page.locator(`tr[data-job-id="${id}"] [data-status]`)).toHaveAttribute('data-status', 'CANCELLED');
  // A finished job's row menu offers Delete (confirmed with a second click); the row leaves the list live.
  await page.getByRole('button', { name: `Actions for job ${ids[0]}` }).click();
  await page.getByRole('menuitem', { name: `Delete job ${ids[0]}` }).click();
  await page.getByRole('menuitem', { name: 'Confirm delete' }).click();
  await expect(page.locator(`tr[data-job-id="${ids[0]}"]`)).toHaveCount(0);
});
