import pg from 'pg';
import { createEmptyPgDatabase } from '../helpers/pg-admin';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import { E2E_SERVER_ENV } from './global-setup';
import { expect, expectNoReload, expectShownPast, login, markNoReload, test, watchPageErrors } from './fixtures';

/**
 * Two servers on one PostgreSQL and one data folder (docs/design.md "Replicas"): a browser on the
 * server that does NOT own a job follows its logs and its restart live — the events come over
 * LISTEN/NOTIFY, the logs from the shared folder — and its cancel, sent through that server,
 * reaches the owner, which ends the job.
 */

let db: { url: string; drop(): Promise<void> };
const servers: ServerProcess[] = [];

test.beforeAll(async () => {
  db = await createEmptyPgDatabase('e2e-replicas');
  const env = { ...E2E_SERVER_ENV, DATABASE_URL: db.url, JOBDECK_LEASE_MS: '3000' };
  const first = await startServerProcess({ env });
  servers.push(first);
  servers.push(await startServerProcess({ env, home: first.home, token: first.token }));
});

test.afterAll(async () => {
  // The second server shares the first one's data folder: the first removes it, last.
  const [first, second] = servers.splice(0);
  await second?.dispose({ keepHome: true });
  await first?.dispose();
  await db?.drop();
});

/** The id a server logged at start (`server id …`). */
function serverId(s: ServerProcess): string {
  const m = /"serverId":"([^"]+)"/.exec(s.output());
  if (!m) throw new Error(`no server id in the output:\n${s.output()}`);
  return m[1];
}

async function ownerOf(id: number): Promise<string | null> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const r = await c.query<{ ownerId: string | null }>('SELECT "ownerId" FROM "Job" WHERE "id" = $1', [id]);
    return r.rows[0]?.ownerId ?? null;
  } finally {
    await c.end();
  }
}

test('a page on the server that does not own a job follows its logs and restart live, and its cancel ends the job', async ({ page }) => {
  const errors = watchPageErrors(page);
  // Attempt 1 fails; attempt 2 (the restart) prints a line every 200 ms until cancelled.
  const yaml =
    'name: replica-follow\njob_recovery:\n  max_restarts_on_errors: 1\nrun: |\n' +
    '  if [ "$JOBDECK_ATTEMPT" = 1 ]; then echo "first try fails"; exit 3; fi\n' +
    '  i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.2; done\n';
  const res = await servers[0].api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: number };

  let owner: string | null = null;
  await expect.poll(async () => (owner = await ownerOf(id)), { timeout: 30_000 }).not.toBeNull();
  const byId = new Map(servers.map((s) => [serverId(s), s]));
  const a = byId.get(owner!);
  const b = servers.find((s) => s !== a);
  expect(a, `owner ${owner} is one of the two servers`).toBeDefined();

  await login(page, { url: b!.url, token: b!.token });
  await page.goto(`${b!.url}/jobs/${id}`);
  await markNoReload(page);
  const viewer = page.getByTestId('log-viewer');
  await expect(page.getByTestId('attempt-0-2')).toHaveAttribute('data-status', 'RUNNING', { timeout: 30_000 });
  // Live: ten more ticks arrive after the last one shown (expectShownPast: not "tick 5", which a
  // page opened late never shows).
  const seen = await expectShownPast(viewer, 'tick', 1, 30_000);
  await expectShownPast(viewer, 'tick', seen + 10, 30_000);
  // The failed first attempt's log is there too (the page follows the latest attempt; one opened
  // after the restart shows attempt 1 when asked).
  await page.getByRole('button', { name: /^Task 0, attempt 1: FAILED/ }).click();
  await expect(viewer.getByText('first try fails', { exact: true })).toBeVisible();

  await page.getByRole('button', { name: 'Cancel job' }).click();
  await page.getByRole('button', { name: 'Confirm cancel' }).click();
  const header = page.getByTestId('job-header');
  await expect(header.locator('[data-status]').first()).toHaveAttribute('data-status', 'CANCELLED', { timeout: 30_000 });
  await expect(page.getByTestId('attempt-0-2')).toHaveAttribute('data-status', 'CANCELLED');
  await expectNoReload(page);
  expect(errors, 'errors in the page (uncaught or console.error)').toEqual([]);
});
