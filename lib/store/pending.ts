/**
 * Writes of a waiting job's scheduling fields — its priority (a user's change) and why it waits
 * (the admission pass's, or its executor's scheduler's) — that are not status changes: no JobEvent, no guarded transition (docs/design.md §4 covers statuses), but
 * each write is guarded by the job still being PENDING, and announced as `updated` on the bus.
 */
import { Prisma } from '../generated/prisma/client';
import type { JobStatus } from '../jobs/status';
import { pgTimestamp } from './sql';
import type { Store } from './store';

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

/**
 * Writes Job.pendingReason of each job given that is still in one of `statuses` and holds
 * another reason, in one statement, and announces `updated` (changed: 'pendingReason') for each
 * row written (the list and job pages show it). `reason` null clears it. Rows left as they were
 * cost no write. Writers: the admission pass (PENDING jobs, the default) and the executor-hold
 * pass (STARTING / RUNNING jobs whose executor's scheduler still holds their attempt:
 * lib/monitor/held.ts). A job's status change clears the reason (lib/monitor/writes.ts).
 * @returns the ids written.
 */
export async function setPendingReasons(store: Store, rows: ReadonlyArray<{ id: number; reason: string | null }>, statuses: readonly JobStatus[] = ['PENDING']): Promise<number[]> {
  if (rows.length === 0) return [];
  const json = JSON.stringify(rows.map((r) => ({ id: r.id, r: r.reason })));
  const written = await store.prisma.$queryRaw<Array<{ id: number }>>(Prisma.sql`
    UPDATE "Job" AS j SET "pendingReason" = v.r
    FROM jsonb_to_recordset(${json}::jsonb) AS v(id int, r text)
    WHERE j."id" = v.id AND j."status"::text IN (${Prisma.join(statuses)}) AND j."pendingReason" IS DISTINCT FROM v.r
    RETURNING j."id"`);
  for (const w of written) store.bus.emit({ type: 'updated', jobId: w.id, changed: 'pendingReason' });
  return written.map((w) => w.id);
}

/**
 * Clears Job.pendingReason of every PENDING job but `keep` (a monitor's first pass: reasons
 * another server's pass left on jobs it will not read). One statement.
 * @returns the ids written.
 */
export async function clearPendingReasons(store: Store, keep: readonly number[]): Promise<number[]> {
  const written = await store.prisma.$queryRaw<Array<{ id: number }>>(Prisma.sql`
    UPDATE "Job" SET "pendingReason" = NULL
    WHERE "status" = 'PENDING' AND "pendingReason" IS NOT NULL
      AND "id" NOT IN (SELECT (x)::int FROM jsonb_array_elements_text(${JSON.stringify(keep)}::jsonb) AS x)
    RETURNING "id"`);
  for (const w of written) store.bus.emit({ type: 'updated', jobId: w.id, changed: 'pendingReason' });
  return written.map((w) => w.id);
}
