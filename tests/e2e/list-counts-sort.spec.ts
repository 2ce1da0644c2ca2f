import { e2eServer, expect, submitSpec, test, waitForStatus } from './fixtures';

/**
 * The jobs list: status chips count the jobs of the search (and keep counting as jobs change),
 * `#ID` finds a job as the page labels it, the order is in the URL, and each row's tasks show
 * as segments coloured by their status.
 */
test('chips count, "#ID" finds the job, the order lives in the URL, task segments show each task', async ({ app: page }) => {
  const { url } = e2eServer();
  // Letters only (each digit of the time as a letter): the bare-number search below must find
  // its job by id, not these names by a digit in them.
  const stamp = String(Date.now()).replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)]);
  const pipeline = await submitSpec(`name: segs-${stamp}-c\n---\nname: first\nrun: echo one\n---\nname: second\nrun: exit 4\n---\nname: third\nrun: echo never\n`);
  const ok = await submitSpec(`name: segs-${stamp}-a\nrun: echo fine\n`);
  const slow = await submitSpec(`name: segs-${stamp}-b\nrun: sleep 60\n`);
  await Promise.all([waitForStatus(pipeline, ['FAILED']), waitForStatus(ok, ['SUCCEEDED']), waitForStatus(slow, ['RUNNING'])]);

  await page.goto(`${url}/?q=segs-${stamp}`);
  await expect(page.locator('tbody tr[data-job-id]')).toHaveCount(3);
  const count = (g: string) => page.getByTestId(`chip-count-${g}`);
  await expect(count('all')).toContainText('3');
  await expect(count('failed')).toContainText('1');
  await expect(count('succeeded')).toContainText('1');
  await expect(count('active')).toContainText('1');
  await expect(count('cancelled')).toContainText('0');
  await expect(page.getByRole('button', { name: 'Failed', exact: true })).toHaveAccessibleDescription('1 job');

  // The running job is cancelled elsewhere: the counts follow without a reload.
  const res = await fetch(`${url}/api/jobs/${slow}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${e2eServer().token}` } });
  expect(res.status).toBe(200);
  await expect(count('cancelled')).toContainText('1');
  await expect(count('active')).toContainText('0');

  // One segment per task, coloured by its status: succeeded, failed, cancelled (never started).
  const segs = page.getByTestId(`task-segs-${pipeline}`).locator('span');
  await expect(segs).toHaveCount(3);
  expect(await segs.evaluateAll((els) => els.map((e) => `${e.getAttribute('data-task-status')}:${e.className}`))).toEqual(['SUCCEEDED:tone-success', 'FAILED:tone-error', 'CANCELLED:tone-neutral']);
  const colours = await segs.evaluateAll((els) => els.map((e) => getComputedStyle(e).backgroundColor));
  expect(new Set(colours).size).toBe(3);

  // The order: by name, in the URL, kept on reload.
  await page.getByTestId('list-sort').selectOption('name');
  await expect(page).toHaveURL(/[?&]sort=name\b/);
  const names = () => page.locator('tbody tr[data-job-id] .col-name a').allTextContents();
  await expect.poll(names).toEqual([`segs-${stamp}-a`, `segs-${stamp}-b`, `segs-${stamp}-c`]);
  await page.reload();
  await expect(page.getByTestId('list-sort')).toHaveValue('name');
  await expect.poll(names).toEqual([`segs-${stamp}-a`, `segs-${stamp}-b`, `segs-${stamp}-c`]);
  await page.getByTestId('list-sort').selectOption('oldest');
  await expect(page).toHaveURL(/[?&]sort=oldest\b/);
  await expect.poll(names).toEqual([`segs-${stamp}-c`, `segs-${stamp}-a`, `segs-${stamp}-b`]);

  // "#ID", as the job page labels it, finds that job; so does the bare number.
  for (const text of [`#${ok}`, `${ok}`]) {
    await page.goto(`${url}/`);
    const box = page.getByRole('searchbox', { name: 'Search jobs by name or ID' });
    // Text typed before the page is hydrated reaches no handler (seen on a loaded machine): type
    // again until the list has taken it, which it records in the URL.
    await expect(async () => {
      await box.fill(text);
      await expect(page).toHaveURL(new RegExp(`[?&]q=${encodeURIComponent(text)}(&|$)`), { timeout: 2000 });
    }).toPass({ timeout: 120_000 });
    await expect(page.locator(`tr[data-job-id="${ok}"]`)).toBeVisible();
    await expect(page.locator(`tr[data-job-id="${pipeline}"]`)).toHaveCount(0);
  }
});
