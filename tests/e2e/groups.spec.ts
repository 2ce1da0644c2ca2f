import { e2eServer, expect, test } from './fixtures';

/**
 * A group (an array) in the dashboard (docs/design.md §17): the jobs list shows it as one row with
 * its progress and counts, live; Cancel group stops its running jobs and the row says so; the
 * row opens the group's page with a row per slot.
 */
test('a group is one row with its progress; Cancel group stops its running jobs; it opens to its slots', async ({ app: page }) => {
  const stamp = Date.now().toString(36);
  const server = e2eServer();
  const res = await fetch(`${server.url}/api/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ yaml: `name: grp-${stamp}\nrun: 'if [ "$mode" = done ]; then exit 0; fi; exec sleep 300'\n`, params: { mode: ['done', 'done', 'wait', 'wait', 'wait', 'wait'] }, origin: 'dashboard' }),
  });
  expect(res.status).toBe(201);
  const { group } = (await res.json()) as { group: { id: number; size: number } };
  expect(group.size).toBe(6);

  await page.goto(`${server.url}/?q=grp-${stamp}`);
  const row = page.getByTestId(`group-row-${group.id}`);
  await expect(row).toContainText(`grp-${stamp}`);
  await expect(row).toContainText('group of 6');
  // The folded list shows none of its jobs as rows of their own.
  await expect(page.locator('tr[data-job-id]')).toHaveCount(0);
  await expect(page.getByTestId(`group-counts-${group.id}`)).toHaveText('4 RUNNING · 2 SUCCEEDED');
  await expect(page.getByTestId(`group-done-${group.id}`)).toHaveText('2/6');
  await expect(page.getByTestId(`group-progress-${group.id}`).locator('[data-status="RUNNING"]')).toHaveAttribute('data-count', '4');

  await row.getByRole('button', { name: 'Cancel group' }).click();
  await row.getByRole('button', { name: 'Cancel all its jobs?' }).click();
  await expect(page.getByTestId(`group-counts-${group.id}`)).toHaveText('2 SUCCEEDED · 4 CANCELLED');
  await expect(page.getByTestId(`group-done-${group.id}`)).toHaveText('6/6');
  await expect(row.getByRole('button', { name: 'Cancel group' })).toHaveCount(0);

  await row.getByRole('link', { name: `grp-${stamp}` }).click();
  await expect(page).toHaveURL(`${server.url}/groups/${group.id}`);
  await expect(page.getByTestId('group-slots').locator('tbody tr')).toHaveCount(6);
  await expect(page.getByTestId('group-slots').locator('tbody tr[data-slot="2"]')).toContainText('Cancelled');
  await expect(page.getByRole('button', { name: 'Re-run failed (4)' })).toBeVisible();
});
