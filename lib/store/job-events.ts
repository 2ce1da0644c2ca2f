/**
 * Reads of a job's history rows (JobEvent): a job stream's poll of one job's new events, and
 * the events another server announced (docs/design.md "Events from any server").
 */
import type { JobEvent } from '../generated/prisma/client';
import type { StoreScope } from './handle';

/** At most this many JobEvent ids in one query of jobEventsByIds(). */
const IDS_PER_QUERY = 500;

/** Job `jobId`'s events with an id above `afterId`, in id order. */
export function jobEventsAfter(store: StoreScope, jobId: number, afterId: number): Promise<JobEvent[]> {
  return store.prisma.jobEvent.findMany({ where: { jobId, id: { gt: afterId } }, orderBy: { id: 'asc' } });
}

/** The events of `ids` that exist, by id (one query per IDS_PER_QUERY ids, each in id order). */
export async function jobEventsByIds(store: StoreScope, ids: readonly number[]): Promise<Map<number, JobEvent>> {
  const events = new Map<number, JobEvent>();
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    for (const e of await store.prisma.jobEvent.findMany({ where: { id: { in: ids.slice(i, i + IDS_PER_QUERY) } }, orderBy: { id: 'asc' } })) events.set(e.id, e);
  }
  return events;
}
