import { openDatabase, type Database } from '../../lib/db/client';
import { createEmptyPgDatabase } from './pg-admin';

export { createEmptyPgDatabase, testPgUrl } from './pg-admin';

/** The database kinds every integration suite runs against. */
export const DB_KINDS = ['pglite', 'postgresql'] as const;
export type DbKind = (typeof DB_KINDS)[number];

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
  const empty = await createEmptyPgDatabase(label);
  const url = empty.url;
  const db = await openDatabase({ databaseUrl: url });
  return {
    db,
    kind,
    url,
    dispose: async (opts = {}) => {
      await db.close();
      if (opts.keep) return;
      await empty.drop();
    },
  };
}

