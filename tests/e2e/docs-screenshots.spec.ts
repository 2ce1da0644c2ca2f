import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { startServerProcess } from '../helpers/server';
import { Receiver } from '../helpers/webhook-receiver';
import { E2E_SERVER_ENV } from './global-setup';
import { e2eServer, example, expect, login, submitSpec, test, waitForStatus } from './fixtures';

/**
 * The README's screenshots: the jobs list, a running job, a failed pipeline with restarts and the
 * Spec tab, at 1440×900 and 390×844, light and dark; the Webhooks page, Insights, a member's
 * jobs list and a waiting job with its place in line, at 1440×900, light and dark. Written to
 * docs/screenshots/ with JOBDECK_DOCS_SCREENSHOTS=1 (to refresh the committed ones), else to
 * test-results/ — each only after the page shows what the picture is of.
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
    await expect(page.getByTestId('log-viewer').getByText(/^epoch \d+\/600/).last()).toBeVisible();
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

test('README screenshots: Webhooks, Insights, a member\u2019s view, a waiting job with its place in line — 1440×900, light and dark', async ({ app: page, browser }) => {
  const { url, token } = e2eServer();
  const vp = VIEWPORTS[0];
  await page.setViewportSize({ width: vp.width, height: vp.height });
  const api = (p: string, body: unknown) => fetch(`${url}${p}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const stamp = Date.now().toString(36);

  // Webhooks: one delivering to a receiver, one whose URL refuses (retrying, its next try shown).
  const r = await new Receiver().up();
  try {
    expect((await api('/api/webhooks', { name: `ops-alerts-${stamp}`, url: r.url, events: ['job.failed', 'task.restarted'] })).status).toBe(201);
    expect((await api('/api/webhooks', { name: `team-chat-${stamp}`, url: 'http://127.0.0.1:9/hook', events: ['job.failed'], format: 'slack' })).status).toBe(201);
    await api(`/api/webhooks/ops-alerts-${stamp}/test`, {});
    await api(`/api/webhooks/team-chat-${stamp}/test`, {});
    await page.goto(`${url}/webhooks`);
    const row = page.locator(`[data-webhook="team-chat-${stamp}"]`);
    await row.getByRole('button', { name: `team-chat-${stamp}`, exact: true }).click();
    await expect(row.getByTestId('delivery-next').first()).toHaveText(/^in \d+ (seconds?|minutes?)$|^due now$/);
    await expect(row.getByTestId('delivery-tries').first()).not.toHaveText('0');
    await shoot(page, 'webhooks', vp);
  } finally {
    await r.down();
  }

  // Insights, after some jobs of this test ran.
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) ids.push(await submitSpec(`name: nightly-eval\nrun: sleep 0.${i + 2}\n`), await submitSpec('name: data-check\nrun: exit 1\n'));
  for (const id of ids) await waitForStatus(id, ['SUCCEEDED', 'FAILED']);
  await page.goto(`${url}/insights`);
  for (const chart of ['chart-throughput', 'chart-wait', 'chart-run']) await expect(page.getByTestId(chart).locator('canvas')).toBeVisible();
  await expect(page.getByTestId('busiest')).toContainText('nightly-eval');
  await shoot(page, 'insights', vp);

  // A member's jobs list: its own jobs, the navigation without the admins' pages.
  const member = `mia-${stamp}`;
  expect((await api('/api/users', { name: member, role: 'member', password: 'correct-horse-1' })).status).toBe(201);
  const context = await browser.newContext({ viewport: { width: vp.width, height: vp.height } });
  try {
    const mp = await context.newPage();
    await mp.goto(`${url}/login`);
    await mp.getByTestId('login-username').fill(member);
    await mp.getByTestId('login-password').fill('correct-horse-1');
    await mp.getByTestId('password-login-submit').click();
    await expect(mp).toHaveURL(`${url}/`);
    for (const name of ['train-small-lr3', 'prep-data', 'eval-sweep']) {
      await mp.evaluate(async (name) => {
        await fetch('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'echo ok', name }) });
      }, name);
    }
    await mp.reload();
    await expect(mp.getByTestId('owner-filter')).toContainText('Your jobs');
    await expect(mp.getByText('eval-sweep')).toBeVisible();
    await shoot(mp, 'member-list', vp);
  } finally {
    await context.close();
  }

  // A waiting job with its place in line, on a server whose queue limits apply (capacity check on).
  const server = await startServerProcess({ env: { ...E2E_SERVER_ENV, JOBDECK_CAPACITY_CHECK: '1', JOBDECK_CPUS: '4' }, timeoutMs: 120_000 });
  try {
    expect((await server.api('/api/queues/gpu', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ maxRunning: 1 }) })).status).toBe(200);
    const waiting: number[] = [];
    await submitSpec('name: finetune-a\nqueue: gpu\nrun: sleep 300\n', server);
    for (const name of ['finetune-b', 'finetune-c', 'finetune-d']) waiting.push(await submitSpec(`name: ${name}\nqueue: gpu\nrun: sleep 300\n`, server));
    await login(page, server);
    await page.goto(`${server.url}/jobs/${waiting[2]}`);
    await expect(page.getByTestId('job-place')).toContainText('3rd in line (3rd in queue gpu); ahead: 2 jobs');
    await shoot(page, 'waiting-job', vp);
    await page.goto(`${server.url}/`);
    await expect(page.locator(`tr[data-job-id="${waiting[2]}"]`).getByTestId('place')).toHaveText('#3 · q3');
    await shoot(page, 'waiting-list', vp);
  } finally {
    // Away from the server before it stops (its sockets would retry, in the page's console).
    await page.goto(`${url}/`);
    await server.dispose();
  }
});
