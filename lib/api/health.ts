import { setting, type Isolation } from '../config';
import type { Database } from '../db/client';
import { pingDatabase } from '../db/ping';
import type { LimitsStatus } from '../jobs/limits';
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
  /**
   * How the local executor holds attempts to their resources (docs/design.md §7 "Limits"): the
   * control groups it uses, what they enforce, and what they do not and why (not root, no
   * controller, JOBDECK_CGROUPS=off). Absent: no server in this process, or a caller without
   * credentials (a reason may name a path).
   */
  limits?: { local: LimitsStatus };
  /**
   * As whom jobs run (docs/design.md §16): `on` — each as its user's OS account; `single-user` —
   * jobdeck is not root and runs only the first admin's jobs, as its own account; `off` — every
   * user's job as jobdeck's own account. A signed-in caller is also told the run account and why.
   * Absent: no server in this process.
   */
  isolation?: { mode: 'on' | 'single-user' | 'off'; runAccount?: string; why?: string };
}

/** The kind of database the configuration names (a malformed DATABASE_URL refused the start: still PostgreSQL's). */
function databaseKind(): Health['database'] {
  try {
    return setting('DATABASE_URL') ? 'postgresql' : 'pglite';
  } catch {
    return 'postgresql';
  }
}

/**
 * Checks the database `db()` returns with a trivial query, and the data folder `home` for a
 * full disk (`degraded`, still 200). Never throws: a failure (including `db()` throwing: no
 * server) is `{ ok: false, error }`. `detail`: say where and what (the data folder's path, the
 * database's own error) — only for an authenticated caller; anyone else learns that something
 * failed, not the server's paths, hosts or database messages. `limits`: the executors' limits
 * status, told with `detail` only.
 */
export async function health(db: () => Database, home?: string, opts: { detail?: boolean; limits?: { local: LimitsStatus }; isolation?: Isolation } = { detail: true }): Promise<Health> {
  const kind = databaseKind();
  try {
    const d = db();
    await pingDatabase(d);
    const full = home ? diskFull(home) : null;
    const where = opts.detail ? `the data folder ${home}: ${full}` : "the data folder's disk is full";
    const degraded = full ? [`${where} — new attempts cannot write their logs or exit records; reads are served`] : undefined;
    const iso = opts.isolation;
    const isolation = iso ? { mode: iso.on ? ('on' as const) : iso.singleUser ? ('single-user' as const) : ('off' as const), ...(opts.detail ? { ...(iso.on ? { runAccount: iso.runAccount } : {}), why: iso.why } : {}) } : undefined;
    return { ok: true, database: d.kind, migrations: d.migrations, version: version(), ...(degraded ? { degraded } : {}), ...(opts.detail && opts.limits ? { limits: opts.limits } : {}), ...(isolation ? { isolation } : {}) };
  } catch (err) {
    const error = opts.detail ? (err as Error).message : 'the database did not answer (a signed-in caller is told why)';
    return { ok: false, database: kind, migrations: [], version: version(), error };
  }
}
