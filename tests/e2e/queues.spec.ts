import { startServerProcess, type ServerProcess } from '../helpers/server';
import { E2E_SERVER_ENV } from './global-setup';
import { expect, login, submitSpec, test } from './fixtures';

/**
 * The queues page, on a server of its own with the capacity check on (queue limits apply): the
 * nav leads to it; a queue is created (its GPU limit and start timeout too), its limit changed
 * and the change seen in what it runs;
 * a delete while its jobs are unfinished is refused with their count; each queue links to the
 * jobs list filtered by it (?queue=, kept in the URL).
 */
test.describe.configure({ mode: 'serial', timeout: 180_000 });

let server: ServerProcess;

test.beforeAll(async () => {
  server = await startServerProcess({ env: { ...E2E_SERVER_ENV, JOBDECK_CAPACITY_CHECK: '1', JOBDECK_CPUS: '4' } });
});

test.afterAll(async () => {
  await server?.dispose();
});

test('queues: create, limit, edit, refused delete, the list filtered by queue, delete', async ({ page }) => {
  await login(page, server);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Queues' }).click();
  await expect(page).toHaveURL(`${server.url}/queues`);
  const row = (name: string) => page.locator(`tr[data-queue="${name}"]`);
  await expect(row('default')).toContainText('no limits');

  // The form checks the name rule before sending.
  await page.getByTestId('queue-name').fill('GPU!');
  await page.getByTestId('queue-save').click();
  await expect(page.getByTestId('queue-notice')).toHaveText('Name: 1–63 characters, a–z, 0–9, - and _, starting with a letter or digit');

  await page.getByTestId('queue-name').fill('gpu');
  await page.getByTestId('queue-maxRunning').fill('1');
  await page.getByTestId('queue-defaultPriority').fill('700');
  await page.getByTestId('queue-maxGpus').fill('2');
  await page.getByTestId('queue-startTimeout').fill('90');
  await page.getByTestId('queue-save').click();
  await expect(page.getByTestId('queue-notice')).toHaveText('Queue gpu saved.');
  await expect(row('gpu').getByTestId('queue-max-running')).toHaveText('1');
  await expect(row('gpu').getByTestId('queue-max-cpus')).toHaveText('–');
  await expect(row('gpu').getByTestId('queue-max-gpus')).toHaveText('2');
  await expect(row('gpu').getByTestId('queue-start-timeout')).toHaveText('90 min');
  await expect(row('gpu').getByTestId('queue-default-priority')).toHaveText('700');
  const saved = (await (await fetch(`${server.url}/api/queues`, { headers: { authorization: `Bearer ${server.token}` } })).json()) as { queues: Array<{ name: string; maxGpus: number | null; startTimeoutMs: number | null }> };
  expect(saved.queues.find((q) => q.name === 'gpu')).toMatchObject({ maxGpus: 2, startTimeoutMs: 5_400_000 });

  const g1 = await submitSpec('name: g1\nqueue: gpu\nrun: sleep 300\n', server);
  const g2 = await submitSpec('name: g2\nqueue: gpu\nrun: sleep 300\n', server);
  const other = await submitSpec('name: other\nrun: sleep 300\n', server);
  // At its limit: one runs, one waits (the page reads the queues again by itself).
  await expect(row('gpu').getByTestId('queue-running')).toHaveText('1');
  await expect(row('gpu').getByTestId('queue-pending')).toHaveText('1');

  await page.getByRole('button', { name: 'Edit queue gpu' }).click();
  await expect(page.getByTestId('queue-name')).toHaveValue('gpu');
  await page.getByTestId('queue-maxRunning').fill('2');
  await page.getByTestId('queue-save').click();
  await expect(page.getByTestId('queue-notice')).toHaveText('Queue gpu changed.');
  await expect(row('gpu').getByTestId('queue-max-running')).toHaveText('2');
  await expect(row('gpu').getByTestId('queue-running')).toHaveText('2');
  await expect(row('gpu').getByTestId('queue-pending')).toHaveText('0');

  // Its jobs have not finished: the server refuses, saying how many.
  await page.getByRole('button', { name: 'Delete queue gpu' }).click();
  await row('gpu').getByRole('button', { name: 'Confirm delete?' }).click();
  await expect(page.getByTestId('queue-notice')).toHaveText('Queue gpu not deleted: queue gpu holds 2 jobs that did not finish: wait for them or cancel them first');
  await expect(row('gpu')).toHaveCount(1);

  // The queue's link: the list of its jobs only, the filter in the URL.
  await row('gpu').getByTestId('queue-jobs').click();
  await expect(page).toHaveURL(`${server.url}/?queue=gpu`);
  await expect(page.getByTestId('queue-filter')).toContainText('Jobs of queue gpu');
  const listed = (id: number) => page.locator(`tr[data-job-id="${id}"]`);
  await expect(listed(g1)).toHaveCount(1);
  await expect(listed(g2)).toHaveCount(1);
  await expect(listed(other)).toHaveCount(0);
  await page.reload();
  await expect(listed(g2)).toHaveCount(1);
  await expect(listed(other)).toHaveCount(0);
  await page.getByRole('button', { name: 'All queues' }).click();
  await expect(page).toHaveURL(`${server.url}/`);
  await expect(listed(other)).toHaveCount(1);

  // Once they ended, it goes.
  await fetch(`${server.url}/api/jobs/cancel`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ all: true }) });
  await page.goto(`${server.url}/queues`);
  await expect(row('gpu').getByTestId('queue-running')).toHaveText('0');
  await expect(row('gpu').getByTestId('queue-pending')).toHaveText('0');
  await page.getByRole('button', { name: 'Delete queue gpu' }).click();
  await row('gpu').getByRole('button', { name: 'Confirm delete?' }).click();
  await expect(page.getByTestId('queue-notice')).toHaveText('Queue gpu deleted.');
  await expect(row('gpu')).toHaveCount(0);
});
