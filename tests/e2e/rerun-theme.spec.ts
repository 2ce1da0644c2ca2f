import { e2eServer, expect, submitSpec, test, waitForStatus } from './fixtures';

/**
 * Re-run: the server submits again what ran (name and envs given at launch, secrets as
 * submitted); "Re-run with changes" opens the editor with the spec and those overrides written
 * in, masked values flagged and submit refused until they are replaced. Also: the theme toggle,
 * and the raw log download.
 */
test('re-run submits again what ran: the name and envs given at launch, secrets included', async ({ app: page }) => {
  const yaml = 'name: train-small\nenvs:\n  EPOCHS: "30"\n  API_TOKEN: s3cr3t-value\nrun: echo "epochs $EPOCHS token ${#API_TOKEN} chars"\n';
  const id = await submitSpec(yaml, e2eServer(), { name: 'renamed-train', envs: { EPOCHS: '2' }, origin: 'cli' });
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  await expect(page.getByTestId('job-header')).not.toContainText('s3cr3t-value');
  await page.getByRole('button', { name: 'Re-run', exact: true }).click();
  await expect(page).not.toHaveURL(new RegExp(`/jobs/${id}$`));
  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  await expect(page.getByTestId('job-header')).toContainText('renamed-train');
  // EPOCHS from the launch override, the secret as submitted (not the mask: 6 characters).
  await expect(page.getByTestId('log-viewer').getByText('epochs 2 token 12 chars', { exact: true })).toBeVisible();

  // The raw download of the attempt in view is the log file itself.
  const href = await page.getByTestId('log-download').getAttribute('href');
  const res = await page.request.get(`${e2eServer().url}${href}`);
  expect(res.status()).toBe(200);
  expect(await res.text()).toContain('epochs 2 token 12 chars');
});

test('re-run with changes opens New job pre-filled with the spec and launch overrides; masked secrets must be typed again', async ({ app: page }) => {
  const id = await submitSpec('name: rerun-secret\nenvs:\n  API_TOKEN: s3cr3t-value\n  MODE: fast\nrun: echo "mode $MODE"\n', e2eServer(), { name: 'launch-name', envs: { MODE: 'careful' } });
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  await page.getByRole('link', { name: 'Re-run with changes' }).click();
  await expect(page).toHaveURL(new RegExp(`/jobs/new\\?from=${id}$`));
  await expect(page.getByTestId('rerun-note')).toContainText('Type each one again');
  const editor = page.getByTestId('yaml-editor');
  await expect(editor).toContainText('API_TOKEN: ••••••');
  await expect(editor).toContainText('name: "launch-name"');
  await expect(editor).toContainText('MODE: careful');
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
  await expect(page.getByTestId('job-header')).toContainText('launch-name');
  await expect(page.getByTestId('log-viewer').getByText('mode careful', { exact: true })).toBeVisible();
});

test('theme toggle on a light system: auto → dark (the first press changes the colours) → light, remembered across a reload', async ({ app: page }) => {
  await page.emulateMedia({ colorScheme: 'light' });
  const html = page.locator('html');
  await expect(html).not.toHaveAttribute('data-theme', /./);
  const toggle = page.getByRole('button', { name: /^Theme: / });
  await expect(toggle).toContainText('Auto');
  const lightBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await toggle.click();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  await expect(toggle).toContainText('Dark');
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe(lightBg);
  await toggle.click();
  await expect(html).toHaveAttribute('data-theme', 'light');
  await toggle.click();
  await expect(html).not.toHaveAttribute('data-theme', /./);
  await expect(toggle).toContainText('Auto');
  await toggle.click();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.reload();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(bg);
  await page.getByRole('button', { name: /^Theme: / }).click();
  await expect(html).toHaveAttribute('data-theme', 'light');
});
