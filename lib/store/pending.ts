/**
 * Writes of a waiting job's scheduling fields — its priority (a user's change), why it waits and
 * its place in line (the admission pass's, or its executor's scheduler's), when its next attempt
 * starts (a restart waiting out its backoff) — that are not status changes: no JobEvent, no
 * guarded transition (docs/design.md §4 covers statuses), but each write is guarded by the job's
 * status, and announced as `updated` on the bus; and the read of the launched attempts whose
 * executor's scheduler may still hold them.
 */
import { Prisma } from '../generated/prisma/client';
import type { JobStatus } from '../jobs/status';
import type { JobPlace } from '../jobs/waiting';
import { pgTimestamp } from './sql';
import type { Store, StoreScope } from './handle';

/** What setPendingPriority() did: `status` is the job's status when it was not written (null: no such job). */
export type PriorityWrite = { written: true } | { written: false; status: JobStatus | null };

/**
 * Sets the priority of job `id` if it is still PENDING (one statement: the status is the guard),
 * and keeps it in Job.launch as a launch override (a re-run submits it again), then announces `updated` (changed: 'priority') so the monitor runs an admission pass.
 * @param priority 0–1000, checked by the caller (lib/jobs/spec PRIORITY).
 */
export async function setPendingPriority(store: Store, id: number, priority: number): Promise<PriorityWrite> {
  // The priority also becomes a launch override, so a re-run keeps it (lib/control/rerun.ts).
  const r = await store.prisma.$executeRaw(Prisma.sql`
    UPDATE "Job" SET "priority" = ${priority}::int, "updatedAt" = ${pgTimestamp(new Date())}::timestamp(3),
      "launch" = jsonb_set(COALESCE("launch", '{}'::jsonb), '{priority}', to_jsonb(${priority}::int))
    WHERE "id" = ${id} AND "status" = 'PENDING'`);
  if (r === 1) {
    store.bus.emit({ type: 'updated', jobId: id, changed: 'priority' });
    return { written: true };
  }
  const row = await store.prisma.job.findUnique({ where: { id }, select: { status: true } });
  return { written: false, status: (row?.status as JobStatus | undefined) ?? null };
}

/** One job's row of setPendingReasons(): why it waits, and (PENDING jobs) its place in line. */
export interface PendingReasonRow {
  id: number;
  /** null clears it. */
  reason: string | null;
  /** The job's place in line (lib/jobs/waiting JobPlace); absent or null clears it. */
  place?: JobPlace | null;
}

/**
 * Writes Job.pendingReason and Job.pendingPlace of each job given that is still in one of
 * `statuses` and holds another reason or place, in one statement, and announces `updated`
 * (changed: 'pendingReason') for each row written (the list and job pages show them). Rows left
 * as they were cost no write. Writers: the admission pass (PENDING jobs, the default: reason and
 * place) and the executor-hold pass (STARTING / RUNNING jobs whose executor's scheduler still
 * holds their attempt: lib/monitor/held.ts; no place). A job's status change clears both
 * (lib/monitor/writes.ts).
 * @returns the ids written.
 */
export async function setPendingReasons(store: Store, rows: readonly PendingReasonRow[], statuses: readonly JobStatus[] = ['PENDING']): Promise<number[]> {
  if (rows.length === 0) return [];
  const json = JSON.stringify(rows.map((r) => ({ id: r.id, r: r.reason, p: r.place ?? null })));
  const written = await store.prisma.$queryRaw<Array<{ id: number }>>(Prisma.sql`
    UPDATE "Job" AS j SET "pendingReason" = v.r, "pendingPlace" = NULLIF(v.p, 'null'::jsonb)
    FROM jsonb_to_recordset(${json}::jsonb) AS v(id int, r text, p jsonb)
    WHERE j."id" = v.id AND j."status"::text IN (${Prisma.join(statuses)})
      AND (j."pendingReason" IS DISTINCT FROM v.r OR j."pendingPlace" IS DISTINCT FROM NULLIF(v.p, 'null'::jsonb))
    RETURNING j."id"`);
  for (const w of written) store.bus.emit({ type: 'updated', jobId: w.id, changed: 'pendingReason' });
  return written.map((w) => w.id);
}

/** A launched attempt whose executor's scheduler may still hold it (launchedAttempts()). */
export interface LaunchedAttempt {
  jobId: number;
  executor: string;
  /** AttemptHandle.ref (the Slurm job id). */
  ref: string;
  /** The job's Job.pendingReason now. */
  pendingReason: string | null;
}

/**
 * The launched attempts of these executors (STARTING / RUNNING, with a ref) of jobs that are
 * STARTING or RUNNING, each with its job's stored reason, by attempt id. Through the index
 * Attempt(status). The executor-hold pass's read (lib/monitor/held.ts).
 */
export async function launchedAttempts(store: StoreScope, executors: readonly string[]): Promise<LaunchedAttempt[]> {
  const rows = await store.prisma.attempt.findMany({
    where: { status: { in: ['STARTING', 'RUNNING'] }, executor: { in: [...executors] }, executorRef: { not: null }, task: { job: { status: { in: ['STARTING', 'RUNNING'] } } } },
    select: { jobId: true, executor: true, executorRef: true, task: { select: { job: { select: { pendingReason: true } } } } },
    orderBy: { id: 'asc' },
  });
  return rows.map((r) => ({ jobId: r.jobId, executor: r.executor, ref: r.executorRef!, pendingReason: r.task.job.pendingReason }));
}

/**
 * Clears Job.pendingReason and Job.pendingPlace of every PENDING job but `keep` (a monitor's
 * first pass: reasons another server's pass left on jobs it will not read) — not of a job
 * waiting for other jobs, whose reason the dependency system keeps. One statement.
 * @returns the ids written.
 */
export async function clearPendingReasons(store: Store, keep: readonly number[]): Promise<number[]> {
  const written = await store.prisma.$queryRaw<Array<{ id: number }>>(Prisma.sql`
    UPDATE "Job" SET "pendingReason" = NULL, "pendingPlace" = NULL
    WHERE "status" = 'PENDING' AND ("pendingReason" IS NOT NULL OR "pendingPlace" IS NOT NULL) AND NOT "depsWaiting"
      AND "id" NOT IN (SELECT (x)::int FROM jsonb_array_elements_text(${JSON.stringify(keep)}::jsonb) AS x)
    RETURNING "id"`);
  for (const w of written) store.bus.emit({ type: 'updated', jobId: w.id, changed: 'pendingReason' });
  return written.map((w) => w.id);
}

/**
 * Sets Job.nextAttemptAt of job `id` (null clears it) if it is in one of `statuses` and holds
 * another value — one statement — and announces `updated` (changed: 'nextAttemptAt'). The
 * monitor writes it when a restart waits out its backoff (lib/monitor/attempts.ts), before the
 * failed attempt's end, so that whoever hears of that end reads when the next one starts; a job
 * status change clears it (lib/monitor/writes.ts).
 * @returns true when written.
 */
export async function setNextAttemptAt(store: Store, id: number, at: Date | null, statuses: readonly JobStatus[] = ['RUNNING']): Promise<boolean> {
  const ts = at === null ? null : pgTimestamp(at);
  const n = await store.prisma.$executeRaw(Prisma.sql`
    UPDATE "Job" SET "nextAttemptAt" = ${ts}::timestamp(3)
    WHERE "id" = ${id} AND "status"::text IN (${Prisma.join(statuses)}) AND "nextAttemptAt" IS DISTINCT FROM ${ts}::timestamp(3)`);
  if (n === 1) store.bus.emit({ type: 'updated', jobId: id, changed: 'nextAttemptAt' });
  return n === 1;
}
