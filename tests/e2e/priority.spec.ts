import { startServerProcess, type ServerProcess } from '../helpers/server';
import { E2E_SERVER_ENV } from './global-setup';
import { expect, login, submitSpec, test } from './fixtures';

/**
 * Why a job waits, and its priority, in the dashboard — on a server of its own with the capacity
 * check on and one CPU, so jobs queue: the list shows a waiting job's reason (short form), and
 * the job page's priority control moves the job ahead of an older one in line.
 */
test.describe.configure({ mode: 'serial', timeout: 180_000 });

let server: ServerProcess;

test.beforeAll(async () => {
  server = await startServerProcess({ env: { ...E2E_SERVER_ENV, JOBDECK_CAPACITY_CHECK: '1', JOBDECK_CPUS: '1' } });
});

test.afterAll(async () => {
  await server?.dispose();
});

test("the list shows a waiting job's reason; the job page's priority control moves it ahead", async ({ page }) => {
  const holder = await submitSpec('name: holder\nrun: sleep 300\n', server);
  const older = await submitSpec('name: older\nrun: echo older\n', server);
  const later = await submitSpec('name: later\nrun: echo later\n', server);
  await login(page, server);

  const row = (id: number) => page.locator(`tr[data-job-id="${id}"]`);
  // The first one waiting is at the front: it needs the CPU the holder has.
  // Each waiting row leads with its place in line (overall · in its queue), then its reason.
  await expect(row(older).getByTestId('place')).toHaveText('#1 · q1');
  await expect(row(older).getByTestId('pending-reason')).toHaveText(/^#1 · q1needs 1 CPU, 0 of 1 free$/);
  await expect(row(holder).getByTestId('pending-reason')).toHaveCount(0);

  await page.goto(`${server.url}/jobs/${later}`);
  const reason = page.getByTestId('pending-reason');
  await expect(reason).toHaveText(/^Waiting: (1 job ahead at priority ≥ 500|in line, behind the jobs admission looked at)( · start timeout in \d+ min)? · queue default$/);
  await page.getByTestId('priority-input').fill('900');
  await page.getByTestId('priority-set').click();
  await expect(page.getByTestId('job-priority')).toHaveText('900');
  await expect(reason).toHaveText(/^Waiting: needs 1 CPU, 0 of 1 free( · start timeout in \d+ min)? · queue default$/);

  await page.goto(`${server.url}/`);
  await expect(row(later).getByTestId('pending-reason')).toHaveText(/^#1 · q1needs 1 CPU, 0 of 1 free$/);
  await expect(row(older).getByTestId('pending-reason')).toHaveText(/^#2 · q21 job ahead at priority ≥ 500$/);

  // A priority out of range cannot be sent.
  await page.goto(`${server.url}/jobs/${older}`);
  await page.getByTestId('priority-input').fill('2000');
  await expect(page.getByTestId('priority-set')).toBeDisabled();

  await fetch(`${server.url}/api/jobs/cancel`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ all: true }) });
});
