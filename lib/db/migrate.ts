import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setting } from '../config';

/**
 * A raw SQL connection the migration runner drives: one session (the advisory lock is held by
 * the session), multi-statement `exec` for migration files, parameterised `query` for the rest.
 */
export interface RawSql {
  /** Runs one or more statements with no parameters (simple query protocol). */
  exec(sql: string): Promise<void>;
  /** Runs one parameterised statement and returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** One migration folder on disk: `prisma/migrations/<name>/migration.sql`. */
export interface MigrationFile {
  name: string;
  sql: string;
  /** sha256 hex of the file's bytes — the checksum `prisma migrate deploy` compares. */
  checksum: string;
}

/** What `migrate()` did: every migration now recorded, and the ones applied by this call. */
export interface MigrationResult {
  applied: string[];
  all: string[];
}

/** Thrown when the database holds a failed or altered migration; nothing was changed. */
export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

/** Fixed key of the PostgreSQL advisory lock that serialises concurrent migrators ("jobdeck"). */
export const MIGRATION_LOCK_KEY = 7_410_251_113;

/**
 * Where the migration folders are: `JOBDECK_MIGRATIONS_DIR`, else `prisma/migrations` next to
 * this package (found from this file when run unbundled), else under the working directory.
 */
export function migrationsDir(): string {
  const dir = setting('JOBDECK_MIGRATIONS_DIR');
  if (dir) return dir;
  // This file's folder from CommonJS' `__dirname` (tsx, vitest and Playwright run it as CommonJS),
  // not import.meta: Playwright's CommonJS output keeps import.meta, and Node then loads the file
  // as an ES module, where `exports` is undefined. A bundle has no such folder: the cwd.
  if (typeof __dirname === 'string') {
    const candidate = path.resolve(__dirname, '..', '..', 'prisma', 'migrations');
    if (existsSync(candidate)) return candidate;
  }
  return path.resolve(process.cwd(), 'prisma', 'migrations');
}

/** Reads the migration folders in name (timestamp) order. */
export function readMigrations(dir: string = migrationsDir()): MigrationFile[] {
  if (!existsSync(dir)) throw new MigrationError(`migrations folder not found: ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const bytes = readFileSync(path.join(dir, name, 'migration.sql'));
      return { name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') };
    });
}

// Prisma's own bookkeeping table (same columns and types as the migrate engine creates), so
// `prisma migrate deploy` on a machine with the engine accepts a database jobdeck migrated.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Applies every migration not yet recorded, each in its own transaction together with its
 * `_prisma_migrations` row. Idempotent; safe when several servers start at once (a session-level
 * advisory lock serialises them, and the second finds everything applied).
 *
 * @throws MigrationError when a recorded migration failed earlier (finished_at null) or its file
 *   changed since it was applied (checksum differs) — the same refusals as `prisma migrate deploy`.
 */
export async function migrate(sql: RawSql, files: MigrationFile[] = readMigrations()): Promise<MigrationResult> {
  await sql.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    await sql.exec(CREATE_TABLE);
    const rows = await sql.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
    );
    const done = new Map<string, { checksum: string }>();
    for (const r of rows) {
      if (r.rolled_back_at) continue;
      if (!r.finished_at) throw new MigrationError(`migration ${r.migration_name} failed earlier and was not rolled back; fix the database, then mark it rolled back`);
      done.set(r.migration_name, r);
    }
    const applied: string[] = [];
    for (const m of files) {
      const prior = done.get(m.name);
      if (prior) {
        if (prior.checksum !== m.checksum) throw new MigrationError(`migration ${m.name} was modified after it was applied (checksum ${prior.checksum.slice(0, 12)}… ≠ ${m.checksum.slice(0, 12)}…)`);
        continue;
      }
      await sql.exec('BEGIN');
      try {
        await sql.exec(m.sql);
        await sql.query(
          'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), now(), 1)',
          [randomUUID(), m.checksum, m.name],
        );
        await sql.exec('COMMIT');
      } catch (err) {
        await sql.exec('ROLLBACK').catch(() => undefined);
        throw new MigrationError(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.name);
    }
    return { applied, all: files.map((f) => f.name) };
  } finally {
    await sql.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
  }
}
