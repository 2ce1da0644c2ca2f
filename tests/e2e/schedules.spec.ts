import { e2eServer, expect, login, test, watchPageErrors } from './fixtures';

/** Console errors other than the failed request the test provokes on purpose (the refused cron's 400). */
const unexpected = (errors: string[]) => errors.filter((e) => !/^console\.error: Failed to load resource: the server responded with a status of 400\b.*\/api\/schedules\)$/.test(e));

/**
 * The Schedules page (docs/design.md §19): a schedule made from the form shows its next fire;
 * Run now submits a job and the row shows it as the last fire; Pause shows it paused; a bad cron
 * is refused with the server's reason; Delete removes it.
 */
test('schedules: create, next fire, run now, pause, a refused cron, delete', async ({ page }) => {
  const errors = watchPageErrors(page);
  await login(page);
  const stamp = Date.now().toString(36);
  const name = `sch-${stamp}`;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' }).click();
  await expect(page).toHaveURL(`${e2eServer().url}/schedules`);

  await page.getByTestId('schedule-form-name').fill(name);
  await page.getByTestId('schedule-form-cron').fill('61 * * * *');
  await page.getByTestId('schedule-form-yaml').fill(`name: ${name}-job\nrun: echo scheduled\n`);
  await page.getByTestId('schedule-create').click();
  await expect(page.getByTestId('schedule-notice')).toContainText('Not created: cron: not a cron expression');

  await page.getByTestId('schedule-form-cron').fill('0 3 * * *');
  await page.getByTestId('schedule-create').click();
  await expect(page.getByTestId('schedule-notice')).toHaveText(`Schedule ${name} created.`);
  const row = page.getByTestId(`schedule-${name}`);
  await expect(row).toContainText('0 3 * * *');
  await expect(page.getByTestId(`schedule-next-${name}`)).toHaveText(/^in \d+ (minute|hour|day)s?$/);
  await expect(page.getByTestId(`schedule-last-${name}`)).toHaveText('—');

  await page.getByTestId(`schedule-run-${name}`).click();
  await expect(page.getByTestId('schedule-notice')).toHaveText(new RegExp(`^Schedule ${name}: job \\d+ submitted\\.$`));
  const jobId = /job (\d+)/.exec((await page.getByTestId('schedule-notice').textContent()) ?? '')![1];
  await expect(page.getByTestId(`schedule-last-${name}`)).toContainText(`job ${jobId}`);

  await page.getByTestId(`schedule-pause-${name}`).click();
  await expect(page.getByTestId(`schedule-next-${name}`)).toHaveText('paused');
  await expect(page.getByTestId(`schedule-pause-${name}`)).toHaveText('Resume');

  await row.getByRole('button', { name: 'Delete' }).click();
  await row.getByRole('button', { name: 'Delete it?' }).click();
  await expect(page.getByTestId(`schedule-${name}`)).toHaveCount(0);
  expect(unexpected(errors), 'errors in the page (uncaught or console.error)').toEqual([]);
});
