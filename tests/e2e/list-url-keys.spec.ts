import { e2eServer, expect, submitSpec, test, waitForStatus } from './fixtures';

/**
 * The jobs list keeps its filter, search and page in the URL (shareable, kept across a reload,
 * Back undoes a filter), is driven by the keyboard (`/`, `j`, `k`, `x`, `Enter`, `?`), and acts
 * on a selection (re-run, delete) instead of a red button on every row.
 */
test('filter, search and page live in the URL: kept on reload, shareable, Back undoes', async ({ app: page, context }) => {
  const { url } = e2eServer();
  const stamp = Date.now();
  const failed = await submitSpec(`name: url-a-${stamp}\nrun: exit 3\n`);
  const ok = await submitSpec(`name: url-b-${stamp}\nrun: echo fine\n`);
  await Promise.all([waitForStatus(failed, ['FAILED']), waitForStatus(ok, ['SUCCEEDED'])]);

  await page.goto(`${url}/`);
  await page.getByRole('button', { name: 'Failed', exact: true }).click();
  await expect(page).toHaveURL(/[?&]status=failed\b/);
  const search = page.getByRole('searchbox', { name: 'Search jobs by name or ID' });
  await search.fill(`url-a-${stamp}`);
  await expect(page).toHaveURL(new RegExp(`[?&]q=url-a-${stamp}\\b`));
  await expect(page.locator(`tr[data-job-id="${failed}"]`)).toBeVisible();

  await page.reload();
  await expect(page.getByRole('button', { name: 'Failed', exact: true })).toHaveAttribute('aria-pressed', 'true');
  await expect(search).toHaveValue(`url-a-${stamp}`);
  await expect(page.locator(`tr[data-job-id="${failed}"]`)).toBeVisible();
  await expect(page.locator(`tr[data-job-id="${ok}"]`)).toHaveCount(0);

  // A shared link opens the same view in another page.
  const other = await context.newPage();
  await other.goto(`${url}/?status=succeeded&q=url-b-${stamp}`);
  await expect(other.getByRole('button', { name: 'Succeeded', exact: true })).toHaveAttribute('aria-pressed', 'true');
  await expect(other.locator(`tr[data-job-id="${ok}"]`)).toBeVisible();
  await expect(other.locator(`tr[data-job-id="${failed}"]`)).toHaveCount(0);
  await other.close();

  // A filter is a history entry: Back returns to the one before.
  await page.getByRole('button', { name: 'All', exact: true }).click();
  await expect(page).not.toHaveURL(/status=/);
  await page.goBack();
  await expect(page).toHaveURL(/[?&]status=failed\b/);
  await expect(page.getByRole('button', { name: 'Failed', exact: true })).toHaveAttribute('aria-pressed', 'true');

  // Paging: 52 jobs of one name, 50 per page; page 2 is in the URL and survives a reload.
  const prefix = `page-${stamp}`;
  const ids = await Promise.all(Array.from({ length: 52 }, (_, i) => submitSpec(`name: ${prefix}-${i}\nrun: "true"\n`)));
  await page.goto(`${url}/?q=${prefix}`);
  await expect(page.locator('tbody tr[data-job-id]')).toHaveCount(50);
  await page.getByRole('button', { name: 'Older →' }).click();
  await expect(page).toHaveURL(/[?&]cursor=/);
  await expect(page.getByTestId('page-number')).toContainText('Page 2');
  const oldest = [...ids].sort((a, b) => a - b).slice(0, 2);
  await expect(page.locator('tbody tr[data-job-id]')).toHaveCount(2);
  await page.reload();
  await expect(page.getByTestId('page-number')).toContainText('Page 2');
  for (const id of oldest) await expect(page.locator(`tr[data-job-id="${id}"]`)).toBeVisible();
  await page.getByRole('button', { name: '← Newer' }).click();
  await expect(page.getByTestId('page-number')).toContainText('Page 1');
  await expect(page).not.toHaveURL(/cursor=/);
  await expect(page.locator('tbody tr[data-job-id]')).toHaveCount(50);
});

test('keyboard: / searches, j / k move, x selects, Enter opens, ? lists the keys', async ({ app: page }) => {
  const stamp = Date.now();
  const ids = await Promise.all([1, 2, 3].map((i) => submitSpec(`name: keys-${stamp}-${i}\nrun: echo ${i}\n`)));
  await Promise.all(ids.map((id) => waitForStatus(id, ['SUCCEEDED'])));
  const newestFirst = [...ids].sort((a, b) => b - a);
  await page.goto(`${e2eServer().url}/?q=keys-${stamp}`);
  await expect(page.locator('tbody tr[data-job-id]')).toHaveCount(3);

  await page.keyboard.press('/');
  const search = page.getByRole('searchbox', { name: 'Search jobs by name or ID' });
  await expect(search).toBeFocused();
  // Typed into the search, j is text, not a move.
  await page.keyboard.type('j');
  await expect(page.locator('tr[aria-current="true"]')).toHaveCount(0);
  await page.keyboard.press('Backspace');
  await page.keyboard.press('Escape');
  await expect(search).not.toBeFocused();
  // The search changed twice (j typed, then taken back): the list answers for the search as it
  // is now before a key can move in it — a busy machine answered after the next key once.
  await expect(page.locator('tbody tr[data-job-id]')).toHaveCount(3);

  const current = page.locator('tr[aria-current="true"]');
  await page.keyboard.press('j');
  await expect(current).toHaveAttribute('data-job-id', String(newestFirst[0]));
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('j'); // stays on the last row
  await expect(current).toHaveAttribute('data-job-id', String(newestFirst[2]));
  await page.keyboard.press('k');
  await expect(current).toHaveAttribute('data-job-id', String(newestFirst[1]));
  await page.keyboard.press('x');
  await expect(page.getByRole('checkbox', { name: `Select job ${newestFirst[1]}` })).toBeChecked();
  await expect(page.getByTestId('selection-bar')).toContainText('1 selected');

  await page.keyboard.press('?');
  const help = page.getByTestId('shortcuts-help');
  await expect(help).toBeVisible();
  const keys = await help.locator('dt kbd').allTextContents();
  for (const k of ['/', 'j', 'k', 'Enter', 'x', '?']) expect(keys).toContain(k);
  await page.keyboard.press('Escape');
  await expect(help).toBeHidden();

  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/jobs/${newestFirst[1]}$`));
  await expect(page.getByTestId('job-header')).toContainText(`keys-${stamp}-`);
});

test('a selection is re-run and deleted from the selection bar; rows have a menu, not red buttons', async ({ app: page }) => {
  const stamp = Date.now();
  const ids = await Promise.all([1, 2].map((i) => submitSpec(`name: bulk-sel-${stamp}-${i}\nrun: echo ${i}\n`)));
  await Promise.all(ids.map((id) => waitForStatus(id, ['SUCCEEDED'])));
  await page.goto(`${e2eServer().url}/?q=bulk-sel-${stamp}`);
  await expect(page.locator('tbody tr[data-job-id]')).toHaveCount(2);
  expect(await page.locator('tbody .btn-danger').count()).toBe(0);

  for (const id of ids) await page.getByRole('checkbox', { name: `Select job ${id}` }).check();
  const bar = page.getByTestId('selection-bar');
  await expect(bar).toContainText('2 selected');
  await bar.getByRole('button', { name: 'Re-run selected (2)' }).click();
  await expect(page.getByTestId('list-notice')).toContainText(/Re-ran jobs \d+, \d+ as jobs \d+, \d+/);
  // The re-runs are new jobs with the same names (the search shows all four).
  await expect(page.locator('tbody tr[data-job-id]')).toHaveCount(4);
  // The re-runs end before the next clicks: a pending row's reason line leaving moves the rows
  // below it, and a click whose press and release land on different rows selects nothing.
  await expect(page.locator('tbody tr[data-job-id] [data-status="SUCCEEDED"]')).toHaveCount(4);

  for (const id of ids) await page.getByRole('checkbox', { name: `Select job ${id}` }).check();
  await bar.getByRole('button', { name: 'Delete selected (2)' }).click();
  await bar.getByRole('button', { name: 'Confirm delete of 2' }).click();
  await expect(page.getByTestId('list-notice')).toContainText(`Deleted jobs ${ids.join(', ')}`);
  for (const id of ids) await expect(page.locator(`tr[data-job-id="${id}"]`)).toHaveCount(0);
  await expect(page.locator('tbody tr[data-job-id]')).toHaveCount(2);
});
