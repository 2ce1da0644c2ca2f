/**
 * An empty, unmigrated database spoken to through the migrator's RawSql (lib/db/migrate.ts): an
 * in-memory PGlite with jobdeck's extensions, or a fresh PostgreSQL database on one client. For
 * the tests that migrate step by step (drift, upgrades) instead of using the migrated fixture.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { RawSql } from '../../lib/db/migrate';
import { pgliteExtensions } from '../../lib/db/pglite-extensions.mjs';
import type { DbKind } from './db';
import { createEmptyPgDatabase } from './pg-admin';

/** RawSql over a PGlite. */
export function pgliteRaw(db: PGlite): RawSql {
  return { exec: async (s) => void (await db.exec(s)), query: async <T,>(s: string, p: unknown[] = []) => (await db.query<T>(s, p)).rows };
}

/** RawSql over one PostgreSQL client. */
export function pgRaw(client: pg.Client): RawSql {
  return { exec: async (s) => void (await client.query(s)), query: async <T,>(s: string, p: unknown[] = []) => (await client.query(s, p)).rows as T[] };
}

/**
 * Opens an empty database of `kind` (PostgreSQL: named after `label`); `cleanups` gets what
 * closes it (and drops the PostgreSQL database), to run in reverse order after the suite.
 */
export async function openEmptyRawSql(kind: DbKind, label: string, cleanups: Array<() => Promise<void>>): Promise<RawSql> {
  if (kind === 'pglite') {
    const db = new PGlite({ extensions: await pgliteExtensions() });
    cleanups.push(() => db.close());
    return pgliteRaw(db);
  }
  const { url, drop } = await createEmptyPgDatabase(label);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  cleanups.push(drop);
  cleanups.push(() => client.end());
  return pgRaw(client);
}
