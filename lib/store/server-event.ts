/**
 * The server's own entries in a job's history (JobEvent rows with entity "server"): jobdeck
 * stopped while the job was not finished, and jobdeck started again and re-adopted it. They are
 * not status changes — no row's status moves, `from` is null — so the status streams skip them;
 * the job page's status history shows them between the transitions (docs/design.md §8).
 */
import type { StoreScope } from './handle';

/** What the server did: stopped with the job unfinished, started and re-adopted it, took it over from a server whose lease expired (docs/design.md "Replicas"), or removed its logs by the retention policy ("Retention"). */
export const SERVER_EVENTS = ['STOPPED', 'READOPTED', 'TAKEN_OVER', 'LOGS_REMOVED'] as const;
/** One of SERVER_EVENTS. */
export type ServerEvent = (typeof SERVER_EVENTS)[number];

/** Writes one server event per job (one statement), all with the same time (ms). */
export async function recordServerEvents(store: StoreScope, entries: ReadonlyArray<{ jobId: number; to: ServerEvent; reason: string }>, at: Date = new Date()): Promise<void> {
  if (entries.length === 0) return;
  await store.prisma.jobEvent.createMany({ data: entries.map((e) => ({ jobId: e.jobId, at, entity: 'server', from: null, to: e.to, reason: e.reason })) });
}

/** When each of `jobIds` last saw the server stop (its newest STOPPED event), for jobs that have one. */
export async function lastServerStops(store: StoreScope, jobIds: readonly number[]): Promise<Map<number, Date>> {
  if (jobIds.length === 0) return new Map();
  const rows = await store.prisma.jobEvent.groupBy({ by: ['jobId'], where: { jobId: { in: [...jobIds] }, entity: 'server', to: 'STOPPED' }, _max: { at: true } });
  return new Map(rows.filter((r) => r._max.at).map((r) => [r.jobId, r._max.at!]));
}
