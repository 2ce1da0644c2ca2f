import { readdirSync } from 'node:fs';
import { isLiveState, readProcStat, type ProcStat } from '../../proc';

/**
 * Process-table helpers for the local executor (Linux `/proc`). Everything here is synchronous
 * and cheap (one small file read per process); nothing throws for a process that is gone.
 */

// Reading one process's entry is lib/proc.ts, shared with the data-folder lock.
export { isLiveState, parseProcStat, readProcStat, type ProcStat } from '../../proc';

let scanCache: { at: number; list: ProcStat[] } | null = null;

/**
 * Every process in `/proc`. Results are shared for `maxAgeMs` (default 20 ms) so that many
 * concurrent cancels polling the table do not each rescan it.
 */
export function listProcesses(maxAgeMs = 20): ProcStat[] {
  const now = Date.now();
  if (scanCache && now - scanCache.at <= maxAgeMs) return scanCache.list;
  const list: ProcStat[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    names = [];
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const stat = readProcStat(Number(name));
    if (stat) list.push(stat);
  }
  scanCache = { at: now, list };
  return list;
}

/**
 * Live (non-zombie) processes whose process group or session is `id`. An attempt's wrapper is
 * started with setsid(), so its pid is both its process group and its session; a process of the
 * attempt that moved to another group (e.g. bash `set -m` background jobs) is still found by its
 * session. Only a process that called setsid() itself escapes (as with Ray and SkyPilot, which
 * also kill by process group).
 */
export function liveMembers(id: number, maxAgeMs = 20): ProcStat[] {
  return listProcesses(maxAgeMs).filter((p) => (p.pgrp === id || p.session === id) && isLiveState(p.state));
}

/**
 * Sends `signal` to a process (pid > 0) or a process group (negative pid).
 * @returns false when there was no such process/group (ESRCH); true when sent.
 * @throws for other errors (EPERM: not ours).
 */
export function sendSignal(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/**
 * One look at the process table, indexed by process group and session: what many concurrent
 * cancels share instead of each rescanning `/proc`: a full scan per cancel blocks the event loop
 * for as long as there are cancels × processes (bench/README.md, fixes table: "Cancel many jobs").
 */
export interface ProcSnapshot {
  /** When its scan started (Date.now(), ms). */
  startedAt: number;
  /** Every process seen (zombies included), in `/proc` order. */
  list: ProcStat[];
  /**
   * Live (non-zombie) processes whose process group or session is `id` — what liveMembers()
   * answers, from this snapshot (O(1) lookup: the index is built once per snapshot).
   */
  members(id: number): ProcStat[];
}

/** A coalescing `/proc` scanner: concurrent callers share scans (createProcScanner). */
export interface ProcScanner {
  /**
   * A snapshot from a scan that STARTS after this call — the same guarantee as
   * `liveMembers(id, 0)`. Callers that ask in the same turn of the event loop, or while a scan is
   * running, share the next scan: N concurrent callers cost one or two scans, not N.
   */
  fresh(): Promise<ProcSnapshot>;
  /**
   * The latest finished snapshot when its scan started at most `maxAgeMs` ago, else fresh() — the
   * same guarantee as `liveMembers(id, maxAgeMs)`.
   */
  recent(maxAgeMs: number): Promise<ProcSnapshot>;
  /** How many scans this scanner has run (for tests and diagnostics). */
  readonly scans: number;
}

/** Options of createProcScanner(). */
export interface ProcScannerOptions {
  /**
   * Reads the process table (default: `/proc`, synchronously in chunks of SCAN_CHUNK processes with a
   * yield to the event loop between chunks, so a scan never blocks it for long). Tests inject a
   * counting or scripted one.
   */
  scan?: () => Promise<ProcStat[]>;
  /** Called when a scan starts (test hook: count scans). */
  onScan?: () => void;
}

const SCAN_CHUNK = 32;

/** The default scan: every process in `/proc`, yielding to the event loop every SCAN_CHUNK reads. */
async function scanProcChunked(): Promise<ProcStat[]> {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const list: ProcStat[] = [];
  let sinceYield = 0;
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const stat = readProcStat(Number(name));
    if (stat) list.push(stat);
    if (++sinceYield >= SCAN_CHUNK) {
      sinceYield = 0;
      await new Promise<void>((r) => setImmediate(r));
    }
  }
  return list;
}

function snapshotOf(startedAt: number, list: ProcStat[]): ProcSnapshot {
  let index: Map<number, ProcStat[]> | null = null;
  return {
    startedAt,
    list,
    members(id: number): ProcStat[] {
      if (!index) {
        index = new Map();
        const add = (key: number, p: ProcStat) => {
          const l = index!.get(key);
          if (l) l.push(p);
          else index!.set(key, [p]);
        };
        for (const p of list) {
          if (!isLiveState(p.state)) continue;
          add(p.pgrp, p);
          if (p.session !== p.pgrp) add(p.session, p);
        }
      }
      return index.get(id)?.slice() ?? [];
    },
  };
}

/**
 * Creates a coalescing process-table scanner (see ProcScanner). At most one scan runs at a time;
 * callers of fresh() that arrive while one runs wait for the next, which starts as soon as the
 * running one ends and serves all of them. A failing scan rejects the callers that waited for it.
 */
export function createProcScanner(opts: ProcScannerOptions = {}): ProcScanner {
  const scan = opts.scan ?? scanProcChunked;
  let waiters: Array<{ resolve: (s: ProcSnapshot) => void; reject: (e: unknown) => void }> = [];
  let running = false;
  let latest: ProcSnapshot | null = null;
  let scans = 0;

  const loop = async (): Promise<void> => {
    while (waiters.length > 0) {
      const batch = waiters;
      waiters = [];
      const startedAt = Date.now();
      scans++;
      opts.onScan?.();
      try {
        const snap = snapshotOf(startedAt, await scan());
        latest = snap;
        for (const w of batch) w.resolve(snap);
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    running = false;
  };

  const fresh = (): Promise<ProcSnapshot> =>
    new Promise((resolve, reject) => {
      waiters.push({ resolve, reject });
      if (!running) {
        running = true;
        // Start on the next turn: every caller of this turn shares the scan.
        setImmediate(() => void loop());
      }
    });

  return {
    fresh,
    recent(maxAgeMs: number): Promise<ProcSnapshot> {
      if (latest && Date.now() - latest.startedAt <= maxAgeMs) return Promise.resolve(latest);
      return fresh();
    },
    get scans() {
      return scans;
    },
  };
}
