/**
 * The server's stops and starts in the history of the jobs they concern (lib/store
 * server-event.ts): at a clean stop, every unfinished job gets "STOPPED"; at a start, before the
 * monitor's recovery re-adopts them, every unfinished job gets "READOPTED", saying how long the
 * server was down (from the job's last STOPPED) or that no stop was recorded (killed, crashed).
 * A failure to write them is logged, never fatal: they are a record, not a rule.
 */
import type { Logger } from 'pino';
import { hostIdentity, pidExists } from '../proc';
import { activeJobIds, jobOwners, jobStatuses, lastServerStops, liveServers, recordServerEvents, type Store } from '../store';

/** With several servers on one PostgreSQL (docs/design.md "Replicas"): this server's id and lease length. */
export interface ReplicaScope {
  serverId: string;
  leaseMs: number;
}

/**
 * With replicas, the jobs a stop or a start concerns: at a stop the ones this server owns; at a
 * start the ones no running server owns (unowned, owner not live, or owner of this host gone).
 */
async function scoped(store: Store, ids: number[], r: ReplicaScope | undefined, at: 'stop' | 'start'): Promise<number[]> {
  if (!r || ids.length === 0) return ids;
  const rows = await jobOwners(store, ids);
  if (at === 'stop') return rows.filter((j) => j.ownerId === r.serverId).map((j) => j.id);
  const running = new Set((await liveServers(store, r.leaseMs)).filter((s) => s.hostId !== hostIdentity() || pidExists(s.pid)).map((s) => s.id));
  return rows.filter((j) => j.ownerId === null || !running.has(j.ownerId)).map((j) => j.id);
}

/** "3.2 s", "4 min 5 s" — how long the server was down. */
function downFor(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** Records "STOPPED" for every unfinished job (a clean stop: close() of the server); with replicas, for those this server owns. */
export async function noteServerStop(store: Store, log: Logger, replicas?: ReplicaScope): Promise<void> {
  try {
    const ids = await scoped(store, await activeJobIds(store, {}), replicas, 'stop');
    const status = await jobStatuses(store, ids);
    await recordServerEvents(
      store,
      ids.map((jobId) => ({ jobId, to: 'STOPPED' as const, reason: `jobdeck stopped while the job was ${status.get(jobId) ?? 'unfinished'}; a running attempt keeps running and is re-adopted at the next start` })),
    );
  } catch (err) {
    log.warn({ err }, 'could not record the stop in the jobs\' history');
  }
}

/** Records "READOPTED" for every unfinished job, before the monitor's start-up recovery; with replicas, for those no running server owns. */
export async function noteServerStart(store: Store, log: Logger, replicas?: ReplicaScope): Promise<void> {
  try {
    const ids = await scoped(store, await activeJobIds(store, {}), replicas, 'start');
    if (ids.length === 0) return;
    const [status, stops] = await Promise.all([jobStatuses(store, ids), lastServerStops(store, ids)]);
    const now = new Date();
    await recordServerEvents(
      store,
      ids.map((jobId) => {
        const stop = stops.get(jobId);
        const after = stop ? `after ${downFor(now.getTime() - stop.getTime())} down` : 'after an unclean stop (no shutdown was recorded)';
        return { jobId, to: 'READOPTED' as const, reason: `jobdeck started again ${after} and re-adopted the job (${status.get(jobId) ?? 'unfinished'})` };
      }),
      now,
    );
  } catch (err) {
    log.warn({ err }, 'could not record the start in the jobs\' history');
  }
}
