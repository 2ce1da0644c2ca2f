import { loadConfig } from '../../lib/config';
import { openDatabase, type Database } from '../../lib/db/client';
import { pgliteTemplateDump, pgTemplate } from './db-templates';
import { createPgDatabaseFrom } from './pg-admin';

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
 * Opens a fresh, migrated database: an in-memory PGlite, or a new PostgreSQL database named after
 * `label` (pg-boss style: one database per test file, dropped when done). Both start as a copy of
 * the migrated template (tests/helpers/db-templates.ts; the migration runner still checks them).
 * Suites do not call this themselves: they use the fixture of tests/helpers/use-database.ts,
 * which calls it in beforeAll and disposes it in afterAll.
 */
export async function createTestDatabase(kind: DbKind, label = 'test'): Promise<TestDatabase> {
  if (kind === 'pglite') {
    // With JOBDECK_PGLITE_WORKER=1 (PGlite in a worker thread) the database is made as a server makes it.
    const db = loadConfig().pgliteWorker
      ? await openDatabase({ pgliteDir: 'memory://' })
      : await openDatabase({ pgliteDir: 'memory://', pgliteLoadDataDir: await pgliteTemplateDump() });
    return { db, kind, dispose: () => db.close() };
  }
  const empty = await createPgDatabaseFrom(await pgTemplate(), label);
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

