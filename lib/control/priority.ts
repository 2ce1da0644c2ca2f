/**
 * Changing a waiting job's priority (docs/design.md §6 "Admission"): allowed while the job is
 * PENDING only — once admitted, its place in line no longer matters. The write is the store's
 * (setPendingPriority: guarded by the status); the monitor hears it on the bus and runs a pass.
 */
import type { Actor } from '../jobs/roles';
import { priorityProblem } from '../jobs/spec';
import type { JobStatus } from '../jobs/status';
import { cachedQueueRows, jobQueueOf, setPendingPriority, type Store } from '../store';
import { checkPriorityCap } from './submit';

/** What changePriority() did. */
export type PriorityOutcome = { kind: 'changed' } | { kind: 'notFound' } | { kind: 'notPending'; status: JobStatus };

/**
 * Sets job `id`'s priority if it is PENDING. A member's change is held to its cap in the job's
 * queue (lib/jobs/priority-cap.ts); `actor` absent: not limited (the server's own calls).
 * @throws RangeError when `priority` is not an integer 0–1000 (callers validate first);
 *   PriorityCapError (lib/control/submit.ts) when it is above the actor's cap.
 */
export async function changePriority(store: Store, id: number, priority: number, actor?: Actor): Promise<PriorityOutcome> {
  const p = priorityProblem(priority);
  if (p) throw new RangeError(p);
  if (actor && actor.role !== 'admin') {
    const queue = await jobQueueOf(store, id);
    if (queue === null) return { kind: 'notFound' };
    checkPriorityCap(actor, priority, (await cachedQueueRows(store)).find((q) => q.name === queue) ?? { name: queue, memberMaxPriority: null });
  }
  const r = await setPendingPriority(store, id, priority);
  if (r.written) return { kind: 'changed' };
  return r.status === null ? { kind: 'notFound' } : { kind: 'notPending', status: r.status };
}
