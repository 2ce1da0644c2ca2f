/**
 * The database fixture itself (tests/helpers/use-database.ts), on both kinds: each test starts
 * from empty tables, `isolation: 'file'` keeps rows between tests, and after the suite the
 * PostgreSQL database is gone and the PGlite database closed. The checks after a suite sit in a
 * sibling test that runs once the inner suite's afterAll has.
 */
import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/client';
import { submitJob } from '../../lib/store';
import { DB_KINDS, testPgUrl } from '../helpers/db';
import { useDatabase, useServerDatabase } from '../helpers/use-database';

const job = (name: string) => ({ name, specYaml: 'run: x\n', spec: {}, specHash: 'h', cpus: 1, tasks: [{ spec: {} }, { spec: {} }] });

/** Rows of every table but the migration record, by table. */
async function rowCounts(db: Database): Promise<Record<string, number>> {
  const tables = await db.prisma.$queryRawUnsafe<{ name: string }[]>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations' ORDER BY tablename`,
  );
  const out: Record<string, number> = {};
  for (const { name } of tables) out[name] = Number((await db.prisma.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM "${name}"`))[0].n);
  return out;
}

/** Whether the PostgreSQL server still has a database named as the last path segment of `url`. */
async function pgDatabaseExists(url: string): Promise<boolean> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new pg.Client({ connectionString: testPgUrl() });
  await admin.connect();
  try {
    return (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await admin.end();
  }
}

describe.each(DB_KINDS)('useDatabase on %s', (kind) => {
  let seen: { db: Database; url: string | undefined; firstJob: number } | undefined;

  describe('isolation per test (the default)', () => {
    const t = useDatabase(kind, `use-database-${kind}`);

    it('a test writes a job, its tasks and its events', async () => {
      const j = await submitJob(t.store, job('first'));
      await t.prisma.$executeRawUnsafe(`INSERT INTO "User" ("name", "role") VALUES ('left-by-a-test', 'member')`);
      const counts = await rowCounts(t.db);
      expect(counts.Job).toBe(1);
      expect(counts.Task).toBe(2);
      expect(counts.JobEvent).toBeGreaterThan(0);
      seen = { db: t.db, url: t.url, firstJob: j.id };
    });

    it('the next test finds every table empty but the first admin, and ids still grow', async () => {
      const counts = await rowCounts(t.db);
      expect(Object.keys(counts)).toEqual(expect.arrayContaining(['Job', 'Task', 'Attempt', 'JobEvent', 'User']));
      // User 1, the admin the migration creates, is there again as a fresh database has it.
      const { User: _users, ...rest } = counts;
      expect(await t.prisma.$queryRawUnsafe(`SELECT "id", "name", "role"::text AS role FROM "User"`)).toEqual([{ id: 1, name: 'admin', role: 'admin' }]);
      expect(Object.values(rest).every((n) => n === 0), JSON.stringify(counts)).toBe(true);
      const j = await submitJob(t.store, job('second'));
      expect(j.id).toBeGreaterThan(seen!.firstJob);
    });

    it('the handle is the suite\'s database: one client, one store, a URL only on postgresql', () => {
      expect(t.db).toBe(seen!.db);
      expect(t.prisma).toBe(seen!.db.prisma);
      expect(t.store).toBe(t.store);
      expect(t.db.kind).toBe(kind);
      if (kind === 'postgresql') expect(t.url).toMatch(/^postgresql:\/\/.+\/jd_[0-9a-f]{8}_[0-9a-f]{8}$/);
      else expect(t.url).toBeUndefined();
    });
  });

  it('after the suite: the PostgreSQL database is dropped, the PGlite database closed', async () => {
    expect(seen).toBeDefined();
    if (kind === 'postgresql') expect(await pgDatabaseExists(seen!.url!)).toBe(false);
    await expect(seen!.db.prisma.job.count()).rejects.toThrow();
  });

  describe("isolation 'file'", () => {
    const t = useDatabase(kind, `use-database-file-${kind}`, { isolation: 'file' });
    it('a test writes a job', async () => {
      await submitJob(t.store, job('kept'));
    });
    it('the next test still sees it', async () => {
      expect(await t.prisma.job.count()).toBe(1);
    });
  });

  describe('read before its beforeAll', () => {
    const t = useDatabase(kind, `use-database-early-${kind}`);
    let early: unknown;
    try {
      void t.prisma;
    } catch (err) {
      early = err;
    }
    it('throws, naming the fixture', () => {
      expect(String(early)).toMatch(/useDatabase\((pglite|postgresql), use-database-early-.*\): the database is open only from the suite's beforeAll/);
      expect(t.prisma).toBeDefined();
    });
  });
});

describe.each(DB_KINDS)('useServerDatabase on %s', (kind) => {
  let seen: { url: string | undefined; home: string; exited: () => boolean } | undefined;

  describe('a server on the database', () => {
    const t = useServerDatabase(kind, `use-server-database-${kind}`);
    it('starts a server that uses this database', async () => {
      const s = await t.start();
      const health = await (await fetch(`${s.url}/api/health`)).json();
      expect(health).toMatchObject({ ok: true, database: kind });
      expect(t.env).toEqual(kind === 'postgresql' ? { DATABASE_URL: t.url } : {});
      if (kind === 'postgresql') {
        const created = await s.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'name: seen-here\nrun: "true"\n' });
        expect(created.status).toBe(201);
        expect(await t.db!.prisma.job.count({ where: { name: 'seen-here' } })).toBe(1);
      } else {
        expect(t.db).toBeUndefined();
      }
      seen = { url: t.url, home: s.home, exited: () => s.proc.exitCode !== null || s.proc.signalCode !== null };
    });
  });

  it('after the suite: its servers are stopped, their folders removed, the PostgreSQL database dropped', async () => {
    expect(seen).toBeDefined();
    expect(seen!.exited()).toBe(true);
    expect(existsSync(seen!.home)).toBe(false);
    if (kind === 'postgresql') expect(await pgDatabaseExists(seen!.url!)).toBe(false);
  });
});
