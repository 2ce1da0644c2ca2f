/**
 * Writes of a PENDING job's scheduling fields — its priority (a user's change) — that are not
 * status changes: no JobEvent, no guarded transition (docs/design.md §4 covers statuses), but
 * each write is guarded by the job still being PENDING, and announced as `updated` on the bus.
 */
import type { JobStatus } from '../jobs/status';
import type { Store } from './store';

/** What setPendingPriority() did: `status` is the job's status when it was not written (null: no such job). */
export type PriorityWrite = { written: true } | { written: false; status: JobStatus | null };

/**
 * Sets the priority of job `id` if it is still PENDING (one statement: the status is the guard),
 * then announces `updated` (changed: 'priority') so the monitor runs an admission pass.
 * @param priority 0–1000, checked by the caller (lib/jobs/spec PRIORITY).
 */
export async function setPendingPriority(store: Store, id: number, priority: number): Promise<PriorityWrite> {
  const r = await store.prisma.job.updateMany({ where: { id, status: 'PENDING' }, data: { priority, updatedAt: new Date() } });
  if (r.count === 1) {
    store.bus.emit({ type: 'updated', jobId: id, changed: 'priority' });
    return { written: true };
  }
  const row = await store.prisma.job.findUnique({ where: { id }, select: { status: true } });
  return { written: false, status: (row?.status as JobStatus | undefined) ?? null };
}
