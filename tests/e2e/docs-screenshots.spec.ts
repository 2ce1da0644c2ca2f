import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { e2eServer, example, expect, submitSpec, test, waitForStatus } from './fixtures';

/**
 * The README's screenshots: the jobs list, a running job, a failed pipeline with restarts and the
 * Spec tab, at 1440×900 and 390×844, light and dark. Written to docs/screenshots/ with
 * JOBDECK_DOCS_SCREENSHOTS=1 (to refresh the committed ones), else to test-results/ — each only
 * after the page shows what the picture is of.
 */
const DIR = process.env.JOBDECK_DOCS_SCREENSHOTS === '1' ? path.join('docs', 'screenshots') : path.join('test-results', 'docs-screenshots');
const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

async function shoot(page: Page, name: string, viewport: (typeof VIEWPORTS)[number]) {
  mkdirSync(DIR, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(scheme === 'dark');
    await page.screenshot({ path: path.join(DIR, `${name}-${viewport.name}-${scheme}.png`) });
  }
}

const FAILED_PIPELINE = `name: nightly-eval
---
name: prepare
run: |
  echo "downloading the evaluation set"
  echo "42 files, 1.3 GB"
---
name: evaluate
job_recovery:
  max_restarts_on_errors: 2
run: |
  echo "attempt $JOBDECK_ATTEMPT: evaluating checkpoint-1200"
  printf '\\033[33mWARN\\033[0m batch size 64 is large for this GPU\\n'
  printf '\\033[31mERROR\\033[0m CUDA out of memory (tried to allocate 2.0 GiB)\\n' >&2
  exit 3
---
name: publish
run: echo "publishing the report"
`;

test('README screenshots: list, running job, failed pipeline with restarts, Spec tab — 1440×900 and 390×844, light and dark', async ({ app: page }) => {
  const { url } = e2eServer();
  const failed = await submitSpec(FAILED_PIPELINE);
  const done = await submitSpec(example('middle-task-retry'));
  const specJob = await submitSpec(example('training-like').replace(/sleep 1\b/, 'sleep 0.1'), e2eServer(), { name: 'train-small-lr3', envs: { EPOCHS: '3', WANDB_API_KEY: 'wandb-secret-0123' }, origin: 'cli' });
  const running = await submitSpec(example('training-like'), e2eServer(), { name: 'train-large', envs: { EPOCHS: '600' }, origin: 'cli' });
  await Promise.all([waitForStatus(failed, ['FAILED']), waitForStatus(done, ['SUCCEEDED']), waitForStatus(specJob, ['SUCCEEDED']), waitForStatus(running, ['RUNNING'])]);

  for (const vp of VIEWPORTS) {
    await page.setViewportSize({ width: vp.width, height: vp.height });

    await page.goto(`${url}/`);
    await expect(page.locator(`tr[data-job-id="${running}"]`)).toContainText('Running');
    await expect(page.getByTestId('chip-count-all')).toBeVisible();
    await shoot(page, 'list', vp);

    await page.goto(`${url}/jobs/${running}`);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await expect(page.getByTestId('log-viewer').getByText(/^epoch \d+\/600/).last()).toBeVisible({ timeout: 30_000 });
    await expect(page.getByTestId('log-line')).not.toHaveCount(0);
    // With line times on (the `t` toggle): when each epoch was written.
    await page.keyboard.press('t');
    await expect(page.getByTestId('log-time').first()).toHaveText(/^\d\d:\d\d:\d\d\.\d{3}$/);
    await shoot(page, 'running-job', vp);

    await page.goto(`${url}/jobs/${failed}`);
    await expect(page.getByText(/^Job ended: FAILED/)).toBeVisible();
    await expect(page.getByTestId('attempt-1-3')).toBeVisible();
    await shoot(page, 'failed-pipeline', vp);

    await page.goto(`${url}/jobs/${specJob}`);
    await page.getByRole('tab', { name: 'Spec' }).click();
    await expect(page.getByTestId('spec-launch')).toContainText('WANDB_API_KEY=••••••');
    await page.getByRole('tablist', { name: 'Job details' }).scrollIntoViewIfNeeded();
    await shoot(page, 'spec-tab', vp);
  }
});
