import { e2eServer, expect, submitSpec, test, waitForStatus } from './fixtures';

/**
 * Re-run: a spec without secrets is submitted again at once; a spec whose env values the API
 * masks opens the editor with the masked values flagged and submit refused until they are
 * replaced. Also: the theme toggle, and the raw log download.
 */
test('re-run without secrets submits the same spec as a new job', async ({ app: page }) => {
  const id = await submitSpec('name: rerun-plain\nenvs:\n  GREETING: hi\nrun: echo "$GREETING from a re-run"\n');
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  await page.getByRole('button', { name: 'Re-run', exact: true }).click();
  await expect(page).not.toHaveURL(new RegExp(`/jobs/${id}$`));
  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  await expect(page.getByTestId('job-header')).toContainText('rerun-plain');
  await expect(page.getByTestId('log-viewer').getByText('hi from a re-run', { exact: true })).toBeVisible();

  // The raw download of the attempt in view is the log file itself.
  const href = await page.getByTestId('log-download').getAttribute('href');
  const res = await page.request.get(`${e2eServer().url}${href}`);
  expect(res.status()).toBe(200);
  expect(await res.text()).toContain('hi from a re-run');
});

test('re-run with masked secrets asks for them in the editor and refuses to submit the mask', async ({ app: page }) => {
  const id = await submitSpec('name: rerun-secret\nenvs:\n  API_TOKEN: s3cr3t-value\n  MODE: fast\nrun: echo "mode $MODE"\n');
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  await expect(page.getByTestId('job-header')).not.toContainText('s3cr3t-value');
  await page.getByRole('button', { name: 'Re-run…' }).click();
  await expect(page).toHaveURL(new RegExp(`/jobs/new\\?from=${id}$`));
  await expect(page.getByTestId('rerun-note')).toContainText('Type each one again');
  await expect(page.getByTestId('yaml-editor')).toContainText('API_TOKEN: ••••••');
  await expect(page.getByTestId('validity')).toContainText('1 masked value to replace');
  await expect(page.getByTestId('submit-job')).toBeDisabled();
  await expect(page.getByTestId('issues')).toContainText('Masked secret value');

  // Replace the mask: submit is allowed again.
  const line = page.locator('.cm-line', { hasText: 'API_TOKEN' });
  await line.click();
  await page.keyboard.press('End');
  for (let i = 0; i < 6; i++) await page.keyboard.press('Backspace');
  await page.keyboard.insertText('another-secret');
  await expect(page.getByTestId('validity')).toHaveText('✓ Valid spec');
  await expect(page.getByTestId('submit-job')).toBeEnabled();
  await page.getByTestId('submit-job').click();
  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  await expect(page.getByTestId('log-viewer').getByText('mode fast', { exact: true })).toBeVisible();
});

test('theme toggle: system → light → dark, remembered across a reload', async ({ app: page }) => {
  const html = page.locator('html');
  await expect(html).not.toHaveAttribute('data-theme', /./);
  const toggle = page.getByRole('button', { name: /^Theme: / });
  await toggle.click();
  await expect(html).toHaveAttribute('data-theme', 'light');
  await toggle.click();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.reload();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(bg);
  await page.getByRole('button', { name: /^Theme: / }).click();
  await expect(html).not.toHaveAttribute('data-theme', /./);
});
