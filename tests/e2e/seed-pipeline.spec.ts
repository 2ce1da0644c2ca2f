import { example, expect, expectNoReload, markNoReload, test } from './fixtures';

/**
 * SkyPilot's retry-each-task pipeline (examples/seed-retry-pipeline.yaml) submitted from the New
 * job page: task 0 fails twice (exit 1, one restart allowed), task 1 never starts, the job ends
 * FAILED — all drawn live on the job page without a reload. Tasks are numbered from 0 everywhere on the page, as in the server's
 * reasons ("task 0: run exited with code 1") and the CLI.
 */
test('seed pipeline from the New job page: two failed attempts, the restart, task 1 cancelled, FAILED — live', async ({ app: page }) => {
  await page.getByRole('link', { name: 'New job', exact: true }).first().click();
  await expect(page).toHaveURL(/\/jobs\/new$/);
  await markNoReload(page);

  // The seed's spec (examples/seed-retry-pipeline.yaml), typed into the editor.
  await page.locator('.cm-content').click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText(example('seed-retry-pipeline'));
  await expect(page.getByTestId('yaml-editor')).toContainText('retry-each-task');
  // The same validator as the API answers as the user types.
  await expect(page.getByTestId('validity')).toHaveText('✓ Valid spec');
  await page.getByTestId('submit-job').click();

  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  // Client-side navigation: the document is the one we marked.
  await expectNoReload(page);

  const banners = page.getByTestId('log-banner');
  const log = page.getByTestId('log-viewer');
  await expect(log.getByText('attempt 1 failed with exit code 1')).toBeVisible();
  await expect(log.getByText(/^Restart 1 of 1 — .*attempt 2 started$/)).toBeVisible();
  await expect(log.getByText('attempt 2 failed with exit code 1')).toBeVisible();
  await expect(log.getByText('Task 0 (retry-each-task), attempt 1 failed with exit code 1', { exact: true })).toBeVisible();
  await expect(log.getByText('Task 1 cancelled — it never started')).toBeVisible();
  await expect(log.getByText(/^Job ended: FAILED/)).toBeVisible();
  await expect(log.getByText('task 1, attempt 1', { exact: true })).toBeVisible();
  await expect(log.getByText('task 1, attempt 2', { exact: true })).toBeVisible();
  await expect(log.getByText('task 2 (should never run)')).toHaveCount(0);

  // The banners tell the story in order.
  const texts = await banners.allTextContents();
  const order = ['attempt 1 started', 'attempt 1 failed with exit code 1', 'Restart 1 of 1', 'attempt 2 failed with exit code 1', 'Task 1 cancelled', 'Job ended: FAILED'];
  const idx = order.map((o) => texts.findIndex((t) => t.includes(o)));
  expect(idx.every((i) => i >= 0), `banners: ${JSON.stringify(texts)}`).toBe(true);
  expect([...idx].sort((a, b) => a - b)).toEqual(idx);

  // Header, pipeline and timeline.
  await expect(page.getByTestId('job-header').locator('[data-status]').first()).toHaveAttribute('data-status', 'FAILED');
  await expect(page.getByTestId('attempt-0-1')).toHaveAttribute('data-status', 'FAILED');
  await expect(page.getByTestId('attempt-0-1')).toContainText('exit 1');
  await expect(page.getByTestId('attempt-0-2')).toHaveAttribute('data-status', 'FAILED');
  await expect(page.getByTestId('attempt-0-2')).toContainText('exit 1');
  await expect(page.getByTestId('attempt-0-2')).toContainText('restart');
  await expect(page.getByTestId('task-1')).toHaveAttribute('data-status', 'CANCELLED');
  await expect(page.getByTestId('task-1-no-attempt')).toBeVisible();
  await expect(page.getByTestId('job-restarts')).toContainText('1');
  await expect(page.getByTestId('stream-status')).toHaveAttribute('data-state', 'ended');
  // The header's reason and the banners name the same task: 0.
  await expect(page.getByTestId('job-reason')).toContainText('task 0');
  await expect(page.getByTestId('task-0')).toContainText('Task 0');
  await expect(page.getByTestId('task-1')).toContainText('Task 1');
  expect(texts.join('\n')).not.toMatch(/Task 2|of 2/);
  // The stream ended: no "Following" any more.
  await expect(page.getByTestId('follow')).toHaveAttribute('data-state', 'ended');
  await expect(page.getByTestId('follow')).toHaveText('Ended');
  await expect(page.getByTestId('log-scope')).not.toContainText('Following');
  // Line numbers run across the attempts: 1, 2 — not 1, 1.
  await expect(log.locator('[data-testid="log-line"] .log-ln')).toHaveText(['1', '2']);
  await expect(log.locator('[data-testid="log-line"] .log-ln').nth(1)).toHaveAttribute('title', /task 0 · attempt 2 · line 1/);

  // Search: Enter right after typing jumps to the first match; Enter/Shift+Enter move on/back.
  const search = page.getByTestId('log-search');
  await search.fill('failed with exit code');
  await search.press('Enter');
  await expect(page.getByTestId('match-count')).toHaveText('1/2');
  await expect(log.locator('.current-match')).toContainText('attempt 1 failed');
  await search.press('Enter');
  await expect(page.getByTestId('match-count')).toHaveText('2/2');
  await expect(log.locator('.current-match')).toContainText('attempt 2 failed');
  await search.press('Shift+Enter');
  await expect(page.getByTestId('match-count')).toHaveText('1/2');
  await search.fill('task 1, attempt');
  await expect(page.getByTestId('match-count')).toHaveText('2 found');
  await search.press('Shift+Enter');
  await expect(page.getByTestId('match-count')).toHaveText('2/2');
  await search.fill('');

  // Selecting attempt 1 in the timeline shows its log (follow pauses).
  await page.getByTestId('attempt-0-1').click();
  await expect(page.getByTestId('log-scope')).toContainText('attempt 1');
  await expect(page.getByTestId('log-download')).toHaveAttribute('href', /task=0&attempt=1$/);
  await expectNoReload(page);
});
