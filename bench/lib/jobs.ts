/** Job-level helpers the measures share: bulk submits, waiting for statuses, stopping everything. */
import { isTerminal } from '../../lib/jobs/status';
import type { JobSummary } from '../../lib/api/types';
import { cancelAll, listAll, openListStream, submitCmd, type ListStreamClient } from './client';
import { processesUnder } from './proc';
import type { BenchServer } from './server';
import { nowMs, pool, sleep, waitFor } from './util';

/** Submits `n` jobs running `cmd` through `clients` concurrent HTTP clients; returns ids in order. */
export async function submitMany(s: BenchServer, n: number, cmd: string, clients = 16, name = 'bench'): Promise<number[]> {
  return pool(n, clients, async (i) => (await submitCmd(s, cmd, { name: `${name}-${i}` })).id);
}

/**
 * A live view of every job's status from the list stream (`/ws/jobs`), with the time each job
 * was first seen in each status.
 */
export interface StatusTracker {
  list: ListStreamClient;
  status: Map<number, string>;
  /** First time (wall ms) a job was seen in a status: key `${id}:${status}`. */
  firstSeen: Map<string, number>;
  /** How many of `ids` are in `status` now. */
  count(ids: readonly number[], status: string): number;
  close(): void;
}

/** Opens the list stream and tracks statuses (open it before submitting). */
export async function trackStatuses(s: BenchServer): Promise<StatusTracker> {
  const status = new Map<number, string>();
  const firstSeen = new Map<string, number>();
  const apply = (j: JobSummary, t: number) => {
    status.set(j.id, j.status);
    const k = `${j.id}:${j.status}`;
    if (!firstSeen.has(k)) firstSeen.set(k, t);
  };
  const list = openListStream(s, (msg, t) => {
    if (msg.type === 'created' || msg.type === 'updated') apply(msg.job, t);
  });
  await list.opened;
  return {
    list,
    status,
    firstSeen,
    count: (ids, st) => ids.reduce((c, id) => c + (status.get(id) === st ? 1 : 0), 0),
    close: () => list.close(),
  };
}

/**
 * Waits until every job of `ids` is in `status`, watching the list stream; the REST list (the
 * source of truth, in case the stream missed or coalesced) is read every `pollMs` without a
 * stream, and with one only while it has shown no progress for STALL_POLLS × `pollMs` (a lost
 * message). Paging through 1,000 jobs every 2 s while they launch was load of the bench's own on
 * the server it measures (bench/README.md, "The bench's own list reads").
 * @returns wall ms when the condition was first seen (by the stream, or by the REST list).
 * @throws on timeout with the counts by status.
 */
export async function waitAllStatus(s: BenchServer, tracker: StatusTracker | null, ids: readonly number[], status: string, timeoutMs: number, pollMs = 2000): Promise<number> {
  const want = new Set(ids);
  let lastPoll = 0;
  let counts = '';
  let seen = -1;
  let movedAt = Date.now();
  return waitFor(
    `all ${ids.length} jobs ${status}`,
    async () => {
      if (tracker) {
        const n = tracker.count(ids, status);
        if (n === ids.length) return nowMs();
        if (n !== seen) [seen, movedAt] = [n, Date.now()];
        if (Date.now() - movedAt < STALL_POLLS * pollMs) return undefined;
      }
      if (Date.now() - lastPoll >= pollMs) {
        lastPoll = Date.now();
        const all = (await listAll(s)).filter((j) => want.has(j.id));
        const by: Record<string, number> = {};
        for (const j of all) by[j.status] = (by[j.status] ?? 0) + 1;
        counts = JSON.stringify(by);
        if ((by[status] ?? 0) === ids.length) return nowMs();
      }
      return undefined;
    },
    { timeoutMs, intervalMs: 20, lastState: () => `last REST count by status: ${counts || 'none yet'}; stream says ${tracker ? tracker.count(ids, status) : 'n/a'} ${status}` },
  );
}

/** Polls without progress on the stream before waitAllStatus reads the REST list. */
const STALL_POLLS = 5;

/** What stopping every job found. */
export interface StopReport {
  /** ms the cancel request itself took to answer (null: no answer within the timeout). */
  requestMs: number | null;
  /** ms from the cancel request until every job was terminal (null: timed out). */
  allTerminalMs: number | null;
  /** ms until no process was left under the server's home (null: some survived the timeout). */
  noProcessMs: number | null;
  /** Processes still there at the timeout (then killed by the bench). */
  leftover: number;
  notTerminal: number;
}

/**
 * Cancels every job through the API and waits until all are terminal and no attempt process
 * remains under the server's home.
 */
export async function cancelEverything(s: BenchServer, timeoutMs = 60_000): Promise<StopReport> {
  const t0 = nowMs();
  let requestMs: number | null = null;
  try {
    await cancelAll(s, AbortSignal.timeout(timeoutMs));
    requestMs = nowMs() - t0;
  } catch (err) {
    if ((err as Error).name !== 'TimeoutError') throw err;
  }
  const spent = () => nowMs() - t0;
  let allTerminalMs: number | null = null;
  let notTerminal = -1;
  while (spent() < timeoutMs + (requestMs ?? 0)) {
    const jobs = await listAll(s);
    notTerminal = jobs.filter((j) => !isTerminal('job', j.status)).length;
    if (notTerminal === 0) {
      allTerminalMs = nowMs() - t0;
      break;
    }
    await sleep(250);
  }
  let noProcessMs: number | null = null;
  let leftover = 0;
  while (spent() < timeoutMs + (requestMs ?? 0) + 15_000) {
    leftover = processesUnder(s.home).length;
    if (leftover === 0) {
      noProcessMs = nowMs() - t0;
      break;
    }
    await sleep(100);
  }
  return { requestMs, allTerminalMs, noProcessMs, leftover, notTerminal };
}
