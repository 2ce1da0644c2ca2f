import type { Database } from '../db/client';
import { diskFull } from '../proc';
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
  /**
   * Present when the server works but not fully: e.g. the data folder's disk is full (new
   * attempts cannot write their logs and exit records; reads are served).
   */
  degraded?: string[];
}

/**
 * Checks the database `db()` returns with a trivial query, and the data folder `home` for a
 * full disk (`degraded`, still 200). Never throws: a failure (including `db()` throwing: no
 * server) is `{ ok: false, error }`.
 */
export async function health(db: () => Database, home?: string): Promise<Health> {
  const kind = process.env.DATABASE_URL ? 'postgresql' : 'pglite';
  try {
    const d = db();
    await d.prisma.$queryRaw`SELECT 1`;
    const full = home ? diskFull(home) : null;
    const degraded = full ? [`the data folder ${home}: ${full} — new attempts cannot write their logs or exit records; reads are served`] : undefined;
    return { ok: true, database: d.kind, migrations: d.migrations, version: version(), ...(degraded ? { degraded } : {}) };
  } catch (err) {
    return { ok: false, database: kind, migrations: [], version: version(), error: (err as Error).message };
  }
}
