import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createEmptyPgDatabase } from '../helpers/pg-admin';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import { E2E_SERVER_ENV } from './global-setup';
import { expect, login, test, watchPageErrors } from './fixtures';

/**
 * A finished log stored compressed (docs/design.md §8 "Compressed logs"), in the browser: the job
 * page shows it to its last line, and the page's download link — Chromium's own network stack,
 * which asks for `Accept-Encoding: gzip` and gets the file as it is on disk — saves every byte
 * (sha256), not just the first of its compressed parts; a fetch from the page shows the
 * `Content-Encoding: gzip` it was sent and the same bytes. A server of its own on PostgreSQL with
 * `JOBDECK_COMPRESS_LOGS_AFTER=0` and a round every 200 ms.
 */

let db: { url: string; drop(): Promise<void> };
let server: ServerProcess;

test.beforeAll(async () => {
  db = await createEmptyPgDatabase('e2e-compressed-log');
  server = await startServerProcess({ env: { ...E2E_SERVER_ENV, DATABASE_URL: db.url, JOBDECK_COMPRESS_LOGS_AFTER: '0', JOBDECK_COMPRESS_INTERVAL_MS: '200' } });
});

test.afterAll(async () => {
  await server?.dispose();
  await db?.drop();
});

/** What the job below prints: 2 MB over many compressed segments, then a last line. */
const EXPECTED = `${Array.from({ length: 300_000 }, (_, i) => `${i + 1}`).join('\n')}\nthe last line of a compressed log\n`;

test('a compressed log shows to its end and downloads whole through the browser', async ({ page }) => {
  const errors = watchPageErrors(page);
  const res = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'name: compressed\nrun: seq 1 300000; echo "the last line of a compressed log"\n' });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: number };
  const monitor = async () => ((await (await server.api('/api/monitor')).json()) as { compression: { files: number } }).compression.files;
  await expect.poll(monitor, { timeout: 60_000 }).toBe(1);

  await login(page, server);
  await page.goto(`${server.url}/jobs/${id}`);
  await expect(page.getByTestId('log-viewer').getByText('the last line of a compressed log')).toBeVisible({ timeout: 60_000 });
  const link = page.getByTestId('log-download').first();
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const saved = readFileSync((await download.path())!);
  expect(saved.length).toBe(Buffer.byteLength(EXPECTED));
  expect(createHash('sha256').update(saved).digest('hex')).toBe(createHash('sha256').update(EXPECTED).digest('hex'));
  // The same through the page's own fetch, which shows the response's headers: gzip on the wire.
  const fetched = await page.evaluate(async (url) => {
    const r = await fetch(url);
    const digest = await crypto.subtle.digest('SHA-256', await r.arrayBuffer());
    return { encoding: r.headers.get('content-encoding'), sha: Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('') };
  }, (await link.getAttribute('href'))!);
  expect(fetched).toEqual({ encoding: 'gzip', sha: createHash('sha256').update(EXPECTED).digest('hex') });
  expect(errors).toEqual([]);
});
