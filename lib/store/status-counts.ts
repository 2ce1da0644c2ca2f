/**
 * Jobs per status from the JobStatusDelta rows (docs/design.md §12 "Counts"): what the unfiltered
 * counts — the dashboard's list header on every view, `/metrics` on every scrape — read instead of
 * counting every job, which at a million jobs is a full scan (about a second on PGlite).
 *
 * Database triggers on Job (the migration `job_status_counts`) append each statement's net change
 * per status in the statement's own transaction, so the sum per status is exactly the jobs a
 * snapshot sees. Rows only ever get appended by writers (no shared counter row to wait on or to
 * deadlock over); a read that finds many of them folds them into one per status.
 */
import type { JobStatus } from '../jobs/status';
import type { Store } from './handle';

/** Rows above which a read folds the deltas into one row per status (then about 13). */
export const FOLD_ABOVE = 512;

/** Counts of jobs by status (statuses without jobs absent) and their total. */
export interface StatusCounts {
  total: number;
  byStatus: Partial<Record<JobStatus, number>>;
}

/**
 * Every job's count per status, read from the deltas; folds them first when more than
 * FOLD_ABOVE rows have gathered. Takes a Store, not a transaction: a fold is its own statement
 * and the VACUUM after it cannot run inside a transaction.
 */
export async function allJobStatusCounts(store: Store): Promise<StatusCounts> {
  const rows = await store.prisma.$queryRawUnsafe<Array<{ status: string; n: bigint | number; rows: bigint | number }>>(
    `SELECT "status"::text AS "status", sum("n")::bigint AS "n", count(*)::bigint AS "rows" FROM "JobStatusDelta" GROUP BY "status"`,
  );
  let deltaRows = 0;
  const byStatus: StatusCounts['byStatus'] = {};
  let total = 0;
  for (const r of rows) {
    deltaRows += Number(r.rows);
    const n = Number(r.n);
    if (n === 0) continue;
    byStatus[r.status as JobStatus] = n;
    total += n;
  }
  if (deltaRows > FOLD_ABOVE) await foldStatusDeltas(store);
  return { total, byStatus };
}

/**
 * Replaces the delta rows this statement sees by one row per status, executor and queue with
 * their sums (groups summing to zero drop out). Rows a concurrent writer appends meanwhile are not in this
 * statement's snapshot and stay; two folds at once each move only rows still there. Then a
 * VACUUM of the small table: PGlite runs no autovacuum, and without one the deleted rows' space
 * is never reused. A failed VACUUM (a role that does not own the table) is ignored.
 */
export async function foldStatusDeltas(store: Store): Promise<void> {
  await store.prisma.$executeRawUnsafe(
    `WITH "moved" AS (DELETE FROM "JobStatusDelta" RETURNING "status", "executor", "queue", "n", "cpus", "gpus")
     INSERT INTO "JobStatusDelta" ("status", "executor", "queue", "n", "cpus", "gpus")
     SELECT "status", "executor", "queue", sum("n"), sum("cpus"), sum("gpus") FROM "moved" GROUP BY "status", "executor", "queue"
     HAVING sum("n") <> 0 OR abs(sum("cpus")) > 1e-9 OR abs(sum("gpus")) > 1e-9`,
  );
  await store.prisma.$executeRawUnsafe(`VACUUM "JobStatusDelta"`).catch(() => undefined);
}
