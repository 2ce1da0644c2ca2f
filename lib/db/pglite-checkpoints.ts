import { logger } from '../log';
import type { RawSql } from './migrate';

/**
 * Checkpoints for the embedded PGlite (docs/design.md §9 "PGlite's folder"). PGlite is a
 * single-user backend with no background processes: no checkpointer, so no checkpoint happens
 * between its open and its close — `max_wal_size` and `checkpoint_timeout` never trigger one — and
 * no write-ahead log segment is recycled. `pg_wal` grew by every write the server made for as
 * long as it ran (~50 MB a minute with 1,000 running jobs sampled every 5 s, bench/README.md).
 * So the process that opened the folder asks, every PGLITE_CHECKPOINT_CHECK_MS, how much log was
 * written since the last checkpoint's redo point, and runs CHECKPOINT past
 * PGLITE_CHECKPOINT_WAL_BYTES, as PostgreSQL's checkpointer does at `max_wal_size`; the
 * checkpoint recycles the segments before it, so the folder keeps about `min_wal_size` (80 MB) of
 * them. Not for PostgreSQL, whose checkpointer does this.
 */

/** Log written since the last checkpoint (bytes) past which a check runs CHECKPOINT. */
export const PGLITE_CHECKPOINT_WAL_BYTES = 64 * 2 ** 20;

/** How often the log written since the last checkpoint is looked at (ms). */
export const PGLITE_CHECKPOINT_CHECK_MS = 30_000;

/** The running checks of one PGlite database (startPgliteCheckpoints). */
export interface PgliteCheckpoints {
  /**
   * One check now (joins one under way): CHECKPOINT when more than the threshold was written
   * since the last one. Never throws (a failure is logged).
   * @returns whether a checkpoint ran.
   */
  check(): Promise<boolean>;
  /** Stops the checks and waits for one under way (before the database closes). */
  stop(): Promise<void>;
  /** Checkpoints run since start. */
  readonly count: number;
}

/**
 * Starts the checks on `sql`, PGlite's own session (every statement waits for an open
 * transaction to end: PGlite runs one at a time). The timer does not keep the process alive.
 * @param opts.walBytes the threshold (default PGLITE_CHECKPOINT_WAL_BYTES); opts.everyMs the
 *   interval (default PGLITE_CHECKPOINT_CHECK_MS; 0: only check() runs one).
 */
export function startPgliteCheckpoints(sql: RawSql, opts: { walBytes?: number; everyMs?: number } = {}): PgliteCheckpoints {
  const walBytes = opts.walBytes ?? PGLITE_CHECKPOINT_WAL_BYTES;
  const everyMs = opts.everyMs ?? PGLITE_CHECKPOINT_CHECK_MS;
  let running: Promise<boolean> | null = null;
  let stopped = false;
  let count = 0;
  const once = async (): Promise<boolean> => {
    try {
      const [row] = await sql.query<{ since: string }>(`SELECT (pg_current_wal_insert_lsn() - (pg_control_checkpoint()).redo_lsn)::text AS since`);
      if (stopped || Number(row?.since ?? 0) <= walBytes) return false;
      await sql.exec('CHECKPOINT');
      count++;
      return true;
    } catch (err) {
      if (!stopped) logger().warn({ err }, 'PGlite checkpoint failed');
      return false;
    }
  };
  const check = (): Promise<boolean> => {
    running ??= once().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = everyMs > 0 ? setInterval(() => void check(), everyMs) : null;
  timer?.unref();
  return {
    check,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running;
    },
    get count() {
      return count;
    },
  };
}
