import { getDatabase } from '../db';
import { version } from '../server/version';

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
 * Checks the database with a trivial query. Never throws: a failure is `{ ok: false, error }`.
 */
export async function health(): Promise<Health> {
  const kind = process.env.DATABASE_URL ? 'postgresql' : 'pglite';
  try {
    const db = await getDatabase();
    await db.prisma.$queryRaw`SELECT 1`;
    return { ok: true, database: db.kind, migrations: db.migrations, version: version() };
  } catch (err) {
    return { ok: false, database: kind, migrations: [], version: version(), error: (err as Error).message };
  }
}
