import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../lib/db/client';

/** The database kinds every integration suite runs against. */
export const DB_KINDS = ['pglite', 'postgresql'] as const;
export type DbKind = (typeof DB_KINDS)[number];

/**
 * Admin URL of the test PostgreSQL server (a role that may CREATE DATABASE). `.ci/run` and
 * `npm test` start the server and create the role; override with JOBDECK_TEST_PG_URL.
 */
export function testPgUrl(): string {
  return process.env.JOBDECK_TEST_PG_URL || 'postgresql://jobdeck:jobdeck@127.0.0.1:5432/jobdeck';
}

function withDb(url: string, dbName: string): string {
  const u = new URL(url);
  u.pathname = `/${dbName}`;
  return u.toString();
}

/** A fresh, migrated database of the given kind, and how to throw it away. */
export interface TestDatabase {
  db: Database;
  kind: DbKind;
  /** postgresql only: the URL of this test's own database (for a server process). */
  url?: string;
  /** Closes it; drops the PostgreSQL database unless `keep` (e.g. a failed test, to inspect). */
  dispose(opts?: { keep?: boolean }): Promise<void>;
}

/**
 * Opens a fresh database: an in-memory PGlite, or a new PostgreSQL database named after `label`
 * (pg-boss style: one database per test file, dropped when done). Suites do not call this
 * themselves: they use the fixture of tests/helpers/use-database.ts, which calls it in beforeAll
 * and disposes it in afterAll.
 */
export async function createTestDatabase(kind: DbKind, label = 'test'): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const db = await openDatabase({ pgliteDir: 'memory://' });
    return { db, kind, dispose: () => db.close() };
  }
  const name = `jd_${createHash('sha1').update(label).digest('hex').slice(0, 8)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testPgUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = withDb(testPgUrl(), name);
  const db = await openDatabase({ databaseUrl: url });
  return {
    db,
    kind,
    url,
    dispose: async (opts = {}) => {
      await db.close();
      if (opts.keep) return;
      const a = new pg.Client({ connectionString: testPgUrl() });
      await a.connect();
      try {
        await dropForced(a, name);
      } finally {
        await a.end();
      }
    },
  };
}

/**
 * DROP DATABASE … WITH (FORCE), tried again for a few seconds when it may not end a backend:
 * an autovacuum worker that just started on the database runs as the superuser, and the test
 * role may not terminate it (SQLSTATE 42501); the worker is gone a moment later.
 */
async function dropForced(a: pg.Client, name: string): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '42501' || i >= 50) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Creates an empty PostgreSQL database (no migrations) and returns its URL and a drop function;
 * for tests of the migration runner itself.
 */
export async function createEmptyPgDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `jd_${createHash('sha1').update(label).digest('hex').slice(0, 8)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testPgUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  return {
    url: withDb(testPgUrl(), name),
    drop: async () => {
      const a = new pg.Client({ connectionString: testPgUrl() });
      await a.connect();
      try {
        await dropForced(a, name);
      } finally {
        await a.end();
      }
    },
  };
}
