import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { startServerProcess } from '../helpers/server';
import { E2E_SERVER_ENV } from './global-setup';
import { e2eServer, example, expect, login, submitSpec, test, waitForStatus } from './fixtures';

/**
 * Screenshots of the three pages (and the empty state, and a phone width) in light and dark,
 * saved under test-results/screenshots/ for people to look at.
 */
const DIR = path.join('test-results', 'screenshots');
const SCHEMES = ['light', 'dark'] as const;

async function shoot(page: Page, name: string, fullPage = false) {
  mkdirSync(DIR, { recursive: true });
  for (const scheme of SCHEMES) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForTimeout(150);
    await page.screenshot({ path: path.join(DIR, `${name}-${scheme}.png`), fullPage });
  }
}

test('screenshots: jobs list, job page, new job — light and dark, laptop and phone', async ({ app: page }) => {
  const seed = await submitSpec(example('seed-retry-pipeline'));
  const colours = await submitSpec(example('training-like').replace(/sleep 1\b/, 'sleep 0.1'));
  const middle = await submitSpec(example('middle-task-retry'));
  const running = await submitSpec('name: long-sleeper\nrun: |\n  echo "waiting for a while"\n  sleep 120\n');
  await Promise.all([waitForStatus(seed, ['FAILED']), waitForStatus(colours, ['SUCCEEDED']), waitForStatus(middle, ['SUCCEEDED']), waitForStatus(running, ['RUNNING'])]);

  await page.goto(`${e2eServer().url}/`);
  await expect(page.getByTestId('jobs-table')).toContainText('long-sleeper');
  await shoot(page, 'jobs');

  await page.goto(`${e2eServer().url}/jobs/${middle}`);
  await expect(page.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  await shoot(page, 'job');

  await page.goto(`${e2eServer().url}/jobs/${colours}`);
  await expect(page.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  await shoot(page, 'job-colours');

  await page.goto(`${e2eServer().url}/jobs/new?template=pipeline-with-retries`);
  await expect(page.getByTestId('validity')).toHaveText('✓ Valid spec');
  await shoot(page, 'new');
  // A spec with a mistake: the problem shows at its line.
  await page.goto(`${e2eServer().url}/jobs/new`);
  const editor = page.locator('.cm-content');
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText('name: broken\nresources:\n  cpus: lots\nrun: echo hi\n');
  await expect(page.getByTestId('issues')).toBeVisible();
  await shoot(page, 'new-error');

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${e2eServer().url}/`);
  await expect(page.getByTestId('jobs-table')).toContainText('long-sleeper');
  await shoot(page, 'phone-jobs', true);
  await page.goto(`${e2eServer().url}/jobs/${seed}`);
  await expect(page.getByText(/^Job ended: FAILED/)).toBeVisible();
  await shoot(page, 'phone-job', true);
  await page.goto(`${e2eServer().url}/jobs/${middle}`);
  await expect(page.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  await shoot(page, 'phone-job4', true);
});

test('screenshot: the empty state of a fresh server tells how to launch a first job', async ({ page }) => {
  const fresh = await startServerProcess({ env: E2E_SERVER_ENV });
  try {
    await login(page, fresh);
    await expect(page.getByTestId('empty-state')).toBeVisible();
    await expect(page.getByTestId('empty-state')).toContainText('npx jobdeck launch');
    await expect(page.getByTestId('empty-state').getByRole('link', { name: 'New job' })).toBeVisible();
    await shoot(page, 'empty');
  } finally {
    await fresh.dispose();
  }
});
