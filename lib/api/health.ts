import type { Database } from '../db/client';
import { version } from './version';

/** The body of `GET /api/health`. */
export interface Health {
  ok: boolean;
  database: 'pglite' | 'postgresql';
  /** Migrations recorded in the database. */
  migrations: string[];
  version: string;
  /** Present when ok is false: what failed. */
  error?: string;
}

/**
 * Checks the database `db()` returns with a trivial query. Never throws: a failure (including
 * `db()` throwing: no server) is `{ ok: false, error }`.
 */
export async function health(db: () => Database): Promise<Health> {
  const kind = process.env.DATABASE_URL ? 'postgresql' : 'pglite';
  try {
    const d = db();
    await d.prisma.$queryRaw`SELECT 1`;
    return { ok: true, database: d.kind, migrations: d.migrations, version: version() };
  } catch (err) {
    return { ok: false, database: kind, migrations: [], version: version(), error: (err as Error).message };
  }
}
