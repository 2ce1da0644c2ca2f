/**
 * A data folder belongs to one database, and a database to one data folder: the folder records
 * the database's identity (`database.json`), the database the folder's (table DataFolder), and
 * a server refuses to start on a mismatch with a message naming both — whichever database kind
 * came first. Two servers on one folder with different databases would otherwise give two jobs
 * id 1 the same attempt folder and kill each other's processes. Real server processes.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=<dir> npx next build`, and the same JOBDECK_NEXT_DIST.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import { startServerProcess, type ServerProcess } from '../helpers/server';

const dbs: TestDatabase[] = [];
const servers: ServerProcess[] = [];
const homes: string[] = [];
afterAll(async () => {
  for (const s of servers) await s.dispose({ keepHome: true });
  for (const d of dbs) await d.dispose();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

async function pgDatabase(label: string): Promise<TestDatabase> {
  const d = await createTestDatabase('postgresql', label);
  dbs.push(d);
  return d;
}
function freshHome(): string {
  const h = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-identity-'));
  homes.push(h);
  return h;
}
async function start(home: string, databaseUrl?: string): Promise<ServerProcess> {
  const s = await startServerProcess({ home, env: databaseUrl ? { DATABASE_URL: databaseUrl } : {} });
  servers.push(s);
  return s;
}
/** The start's failure text (it must fail). */
async function refused(home: string, databaseUrl?: string): Promise<string> {
  const err = await startServerProcess({ home, env: databaseUrl ? { DATABASE_URL: databaseUrl } : {} }).then(
    (s) => {
      servers.push(s);
      return null;
    },
    (e: Error) => e,
  );
  expect(err, 'the server started').toBeInstanceOf(Error);
  return err!.message;
}
/** A URL as the message shows it: no password. */
const shown = (url: string) => {
  const u = new URL(url);
  u.password = '';
  return u.toString().replace(/\/$/, '');
};

describe.each(DB_KINDS)('data folder identity, first server on %s', (kind) => {
  it('a second server on the same folder with another database is refused, naming both; the first keeps its job', async () => {
    const home = freshHome();
    const first = kind === 'postgresql' ? (await pgDatabase(`identity-a-${kind}`)).url! : undefined;
    const y = await start(home, first);
    const sub = await y.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'sleep 30', name: 'first' }) });
    expect(sub.status).toBe(201);
    const { id } = (await sub.json()) as { id: number };

    // The other database: a fresh PostgreSQL one after PGlite, PGlite (its folder in this home)
    // after PostgreSQL.
    const other = kind === 'pglite' ? (await pgDatabase(`identity-b-${kind}`)).url! : undefined;
    if (kind === 'postgresql') await y.stop(); // PGlite's folder lock would refuse first, for another reason
    const msg = await refused(home, other);
    expect(msg).toContain(`data folder ${home}`);
    expect(msg).toContain(kind === 'pglite' ? `PGlite at ${path.join(home, 'db')}` : shown(first!));
    expect(msg).toContain(kind === 'pglite' ? shown(other!) : `PGlite at ${path.join(home, 'db')}`);
    if (kind === 'pglite') {
      const job = (await (await y.api(`/api/jobs/${id}`)).json()) as { status: string };
      expect(job.status).toMatch(/STARTING|RUNNING/);
      await y.api(`/api/jobs/${id}/cancel`, { method: 'POST' });
    }
    await y.stop();

    // The pair that belongs together still starts, and knows its job.
    const again = await start(home, first);
    expect((await again.api(`/api/jobs/${id}`)).status).toBe(200);
    await again.stop();
  });

});

// A PGlite database lives inside its folder, so only PostgreSQL can be pointed at a second one.
describe('data folder identity, a PostgreSQL database and a second folder', () => {
  it('a database already used with one folder is refused with another folder', async () => {
    const url = (await pgDatabase('identity-c')).url!;
    const h1 = freshHome();
    const a = await start(h1, url);
    await a.stop();
    const h2 = freshHome();
    const msg = await refused(h2, url);
    expect(msg).toContain(h1);
    expect(msg).toContain(h2);
    expect(msg).toContain(shown(url));
  });
});
