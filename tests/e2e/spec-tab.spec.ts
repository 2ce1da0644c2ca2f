import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { e2eServer, expect, submitSpec, test, waitForStatus } from './fixtures';

/**
 * The job page's Spec tab: where the job came from, what was given at launch beside the YAML,
 * each task's command, setup, resources, workdir and envs, and the YAML as submitted — every
 * secret masked exactly as the API masks it, nowhere in the page in clear.
 */
const PIPELINE = `name: spec-tab-pipeline
---
name: prepare
setup: echo preparing
envs:
  GITHUB_TOKEN: ghp_clearvalue123
  EPOCHS: "3"
workdir: /tmp
run: echo "prepare $EPOCHS"
---
name: train
resources:
  cpus: 2+
  memory: 1+
job_recovery:
  max_restarts_on_errors: 1
run: echo train
`;

test('the Spec tab shows origin, launch overrides, per-task summary and the masked YAML', async ({ app: page }) => {
  const id = await submitSpec(PIPELINE, e2eServer(), { name: 'spec-renamed', envs: { EPOCHS: '5', DB_PASSWORD: 'pw-clear-456' }, origin: 'cli' });
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  await expect(page.getByRole('tab', { name: 'Pipeline' })).toHaveAttribute('aria-selected', 'true');
  await page.getByRole('tab', { name: 'Spec' }).click();
  await expect(page.getByRole('tab', { name: 'Spec' })).toHaveAttribute('aria-selected', 'true');
  const panel = page.getByTestId('spec-panel');
  await expect(panel).toBeVisible();
  await expect(page.getByTestId('spec-origin')).toHaveText('the CLI (jobdeck launch)');
  await expect(page.getByTestId('spec-launch')).toContainText('name spec-renamed');
  await expect(page.getByTestId('spec-launch')).toContainText('EPOCHS=5');
  await expect(page.getByTestId('spec-launch')).toContainText('DB_PASSWORD=••••••');

  const prepare = page.getByTestId('spec-task-0');
  await expect(prepare).toContainText('echo "prepare $EPOCHS"');
  await expect(prepare).toContainText('echo preparing');
  await expect(prepare).toContainText('/tmp');
  await expect(prepare).toContainText('GITHUB_TOKEN=••••••');
  await expect(prepare).toContainText('EPOCHS=5');
  const train = page.getByTestId('spec-task-1');
  await expect(train).toContainText('2+ CPUs · 1+ GB memory');
  await expect(train).toContainText('restart up to 1×');
  await expect(train).toContainText("the job's own folder");

  // The YAML is the API's masked text, character for character.
  const res = await page.request.get(`${e2eServer().url}/api/jobs/${id}`);
  const api = (await res.json()) as { specYaml: string };
  expect(api.specYaml).toContain('GITHUB_TOKEN: ••••••');
  expect(await page.getByTestId('spec-yaml').textContent()).toBe(api.specYaml);
  const html = await page.content();
  for (const secret of ['ghp_clearvalue123', 'pw-clear-456']) expect(html).not.toContain(secret);

  // Arrow keys move between the tabs; the log viewer stays on the page with either.
  await page.getByRole('tab', { name: 'Spec' }).press('ArrowLeft');
  await expect(page.getByRole('tab', { name: 'Pipeline' })).toBeFocused();
  await expect(page.getByTestId('pipeline')).toBeVisible();
  await expect(page.getByTestId('log-viewer')).toBeVisible();
});

test('a job from the New job page says it came from the dashboard', async ({ app: page }) => {
  await page.goto(`${e2eServer().url}/jobs/new`);
  await page.getByTestId('submit-job').click();
  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  await page.getByRole('tab', { name: 'Spec' }).click();
  await expect(page.getByTestId('spec-origin')).toHaveText('the dashboard');
  await expect(page.getByTestId('spec-launch')).toHaveCount(0);
});

test('a job with an uploaded workdir shows the upload\'s size and file list on the Spec tab', async ({ app: page }) => {
  const server = e2eServer();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-e2e-upload-'));
  try {
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src', 'main.py'), 'print("hi")\n');
    writeFileSync(path.join(dir, 'README'), 'hello\n');
    execFileSync('tar', ['-czf', path.join(dir, 'up.tgz'), '-C', dir, 'README', 'src']);
    const up = await fetch(`${server.url}/api/uploads`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/gzip' }, body: readFileSync(path.join(dir, 'up.tgz')) });
    expect(up.status).toBe(201);
    const { hash } = (await up.json()) as { hash: string };
    const res = await fetch(`${server.url}/api/jobs`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ yaml: 'workdir: .\nrun: cat README\n', workdirUpload: hash }) });
    const { id } = (await res.json()) as { id: number };
    await waitForStatus(id, ['SUCCEEDED']);
    await page.goto(`${server.url}/jobs/${id}`);
    await page.getByRole('tab', { name: 'Spec' }).click();
    const block = page.getByTestId('spec-upload');
    await expect(block).toContainText('Uploaded folder (the relative workdir): 3 entries, 18 bytes of files');
    await expect(block).toContainText(hash.slice(0, 12));
    await block.locator('summary').click();
    await expect(block.getByText('src/main.py')).toBeVisible();
    await expect(block.getByText('README', { exact: true })).toBeVisible();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
