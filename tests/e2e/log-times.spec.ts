import { readFile } from 'node:fs/promises';
import { e2eServer, expect, submitSpec, test, waitForStatus } from './fixtures';

/**
 * Line times and the downloads on the job page: the Times toggle (and `t`) shows when each line
 * was written — three lines a second apart read a second apart — and hides it again; `?` lists
 * `t`; "Download whole job" saves `job-<id>-<name>.log` with every task and attempt under its
 * header, "Download this attempt" names the attempt.
 */
test('the Times toggle shows when each line was written; t toggles it; ? lists it', async ({ app: page }) => {
  // Each line waits until the one before has its time in the attempt's index (`../run.times`
  // from the default workdir, docs/design.md §8), then a second: the lines are a second apart
  // by construction, however late a busy server looks at the log.
  const wait = (n: number) => `until [ "$(wc -l 2>/dev/null < ../run.times || echo 0)" -ge ${n} ]; do sleep 0.05; done`;
  const id = await submitSpec(`name: times-e2e\nrun: |\n  echo one\n  ${wait(1)}\n  sleep 1; echo two\n  ${wait(2)}\n  sleep 1; echo three\n`);
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  const log = page.getByTestId('log-viewer');
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  // Off by default.
  await expect(log).toHaveAttribute('data-times', 'false');
  await expect(log.getByTestId('log-time')).toHaveCount(0);
  await page.getByTestId('log-times').click();
  await expect(page.getByTestId('log-times')).toHaveAttribute('aria-pressed', 'true');
  const times = log.getByTestId('log-time');
  await expect(times).toHaveCount(3);
  const ms = (await times.evaluateAll((els) => els.map((e) => e.getAttribute('data-ms')))).map(Number);
  expect(ms.every((t) => t > 0), JSON.stringify(ms)).toBe(true);
  expect(ms[1] - ms[0]).toBeGreaterThanOrEqual(700);
  expect(ms[2] - ms[1]).toBeGreaterThanOrEqual(700);
  // Shown as a local time of day with milliseconds.
  await expect(times.first()).toHaveText(/^\d\d:\d\d:\d\d\.\d{3}$/);
  await page.keyboard.press('t');
  await expect(log.getByTestId('log-time')).toHaveCount(0);
  await page.keyboard.press('t');
  await expect(log.getByTestId('log-time')).toHaveCount(3);

  await page.keyboard.press('?');
  const help = page.getByTestId('shortcuts-help');
  await expect(help).toBeVisible();
  expect(await help.locator('dt kbd').allTextContents()).toContain('t');
  await page.keyboard.press('Escape');
});

test('"Download whole job" saves every task and attempt under its header, named after the job', async ({ app: page }) => {
  const yaml = 'name: whole-e2e\n---\nname: first\njob_recovery:\n  max_restarts_on_errors: 1\nrun: |\n  echo "first $JOBDECK_ATTEMPT"\n  [ "$JOBDECK_ATTEMPT" = 2 ]\n---\nname: second\nrun: echo second\n';
  const id = await submitSpec(yaml);
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  const log = page.getByTestId('log-viewer');
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  await expect(page.getByRole('link', { name: /^Download this attempt \(attempt 1 of task 1\)$/ })).toBeVisible();
  const whole = page.getByRole('link', { name: 'Download whole job' });
  await expect(whole).toHaveAttribute('data-testid', 'log-download-job');
  const [download] = await Promise.all([page.waitForEvent('download'), whole.click()]);
  expect(download.suggestedFilename()).toBe(`job-${id}-whole-e2e.log`);
  const text = await readFile((await download.path())!, 'utf8');
  expect(text).toBe('==> task 0 first · attempt 1 (exit 1) <==\nfirst 1\n==> task 0 first · attempt 2 (exit 0) <==\nfirst 2\n==> task 1 second · attempt 1 (exit 0) <==\nsecond\n');
});
