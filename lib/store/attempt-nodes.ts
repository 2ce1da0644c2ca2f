import { Prisma } from '../generated/prisma/client';
import type { Store } from './handle';

/**
 * Records where an attempt runs (Attempt.nodes: host names in rank order) once its executor knows
 * — a Slurm job starts on its nodes after the monitor attached to it. Not a status write: one
 * row, only while none is recorded, so a repeated or late call changes nothing; announced as
 * `updated` (`changed: 'nodes'`) for the list streams.
 * @returns whether it was written.
 */
export async function recordAttemptNodes(store: Store, jobId: number, attemptId: number, nodes: readonly string[]): Promise<boolean> {
  const r = await store.prisma.attempt.updateMany({ where: { id: attemptId, nodes: { equals: Prisma.DbNull } }, data: { nodes: [...nodes] } });
  if (r.count === 0) return false;
  store.bus.emit({ type: 'updated', jobId, changed: 'nodes' });
  return true;
}
