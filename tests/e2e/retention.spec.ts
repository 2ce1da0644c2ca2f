import pg from 'pg';
import { formatBytes } from '../../lib/jobs/usage';
import { createEmptyPgDatabase } from '../helpers/pg-admin';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import { E2E_SERVER_ENV } from './global-setup';
import { expect, login, test, watchPageErrors } from './fixtures';

/**
 * The job page of a job whose logs the retention policy removed (docs/design.md "Retention"): it
 * says "logs removed on <date> by the retention policy" — above the log and in the log pane —
 * instead of an empty log; before, it shows what the job's logs take on disk (the log and its time
 * index). A server of its own on PostgreSQL, with a one-day log period and a
 * pass every 200 ms; the job's end is moved two days back in the database, as time would.
 */

let db: { url: string; drop(): Promise<void> };
let server: ServerProcess;

test.beforeAll(async () => {
  db = await createEmptyPgDatabase('e2e-retention');
  server = await startServerProcess({ env: { ...E2E_SERVER_ENV, DATABASE_URL: db.url, JOBDECK_RETAIN_LOGS_DAYS: '1', JOBDECK_RETENTION_INTERVAL_MS: '200' } });
});

test.afterAll(async () => {
  await server?.dispose();
  await db?.drop();
});

async function sql(text: string, values: unknown[]): Promise<void> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query(text, values);
  } finally {
    await c.end();
  }
}

async function job(id: number): Promise<{ status: string; logsRemovedAt: string | null }> {
  const res = await server.api(`/api/jobs/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

test('a job whose logs the retention policy removed says so on its page instead of an empty log', async ({ page }) => {
  const errors = watchPageErrors(page);
  const res = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'name: retained\nrun: echo "the line retention removes"\n' });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: number };
  await expect.poll(async () => (await job(id)).status, { timeout: 60_000 }).toBe('SUCCEEDED');

  await login(page, server);
  await page.goto(`${server.url}/jobs/${id}`);
  await expect(page.getByTestId('log-scroller')).toContainText('the line retention removes');
  await expect(page.getByTestId('logs-removed')).toHaveCount(0);
  // Before: the page shows what its logs take on disk (the log and its time index: more than the line).
  const usage = ((await (await server.api(`/api/jobs/${id}`)).json()) as { logBytesTotal: number }).logBytesTotal;
  expect(usage).toBeGreaterThan('the line retention removes\n'.length);
  await expect(page.getByTestId('job-log-usage')).toHaveText(`${formatBytes(usage)} on disk`);

  // Ended two days ago: past the one-day period, the next pass removes the logs.
  await sql(`UPDATE "Job" SET "endedAt" = now() - interval '2 days' WHERE "id" = $1`, [id]);
  await expect.poll(async () => (await job(id)).logsRemovedAt, { timeout: 30_000 }).not.toBeNull();
  const at = new Date((await job(id)).logsRemovedAt!).toISOString();
  const text = `logs removed on ${at.slice(0, 10)} ${at.slice(11, 16)} UTC by the retention policy`;

  await page.goto(`${server.url}/jobs/${id}`);
  await expect(page.getByTestId('logs-removed')).toHaveText(text);
  await expect(page.getByTestId('job-log-usage')).toHaveText(text);
  const pane = page.getByTestId('log-scroller');
  await expect(pane).toContainText(text);
  await expect(pane).not.toContainText('This job printed nothing');
  await expect(pane).not.toContainText('the line retention removes');
  expect(errors).toEqual([]);
});
