/** One job's whole story as rows: the job, its tasks with every attempt, its events. */
import type { Attempt, Job, JobEvent, Task } from '../generated/prisma/client';
import type { StoreScope } from './handle';

/** A job with its tasks (index order), their attempts (number order) and its events (id order). */
export type JobTree = Job & { tasks: Array<Task & { attempts: Attempt[] }>; events: JobEvent[] };

/** The job's tree in one read, or null when the job does not exist (e.g. deleted). */
export async function jobTree(store: StoreScope, id: number): Promise<JobTree | null> {
  return store.prisma.job.findUnique({
    where: { id },
    include: { tasks: { orderBy: { index: 'asc' }, include: { attempts: { orderBy: { number: 'asc' } } } }, events: { orderBy: { id: 'asc' } } },
  });
}
