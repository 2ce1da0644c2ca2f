/**
 * Changing a waiting job's priority (docs/design.md §6 "Admission"): allowed while the job is
 * PENDING only — once admitted, its place in line no longer matters. The write is the store's
 * (setPendingPriority: guarded by the status); the monitor hears it on the bus and runs a pass.
 */
import { priorityProblem } from '../jobs/spec';
import type { JobStatus } from '../jobs/status';
import { setPendingPriority, type Store } from '../store';

/** What changePriority() did. */
export type PriorityOutcome = { kind: 'changed' } | { kind: 'notFound' } | { kind: 'notPending'; status: JobStatus };

/**
 * Sets job `id`'s priority if it is PENDING.
 * @throws RangeError when `priority` is not an integer 0–1000 (callers validate first).
 */
export async function changePriority(store: Store, id: number, priority: number): Promise<PriorityOutcome> {
  const p = priorityProblem(priority);
  if (p) throw new RangeError(p);
  const r = await setPendingPriority(store, id, priority);
  if (r.written) return { kind: 'changed' };
  return r.status === null ? { kind: 'notFound' } : { kind: 'notPending', status: r.status };
}
