import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { logger } from '../../log';
import { diskFull } from '../../proc';
import { EXIT_FILE, readExitRecord, readLostBytes, toResult, type EndResult } from '../attempt-record';
import { identity } from './handle';
import type { AttemptHandle } from '../types';

/**
 * The wrappers one local executor spawned and has not seen end. Their parent (this process, or
 * the attempt launcher) reaps them and reports each exit at once, so watch() hears of the end
 * without polling and probe() waits for the reap of its own zombie. Nothing else depends on this
 * memory: a fresh executor works from the attempt folder and the process table alone
 * (docs/design.md, "Executors").
 */

/** One spawned wrapper not reaped yet. */
export interface ChildEntry {
  pid: number;
  handle: AttemptHandle;
  startTime: string;
  listeners: Set<(r: EndResult) => void>;
  /** Resolves after the wrapper was reaped (or, the launcher gone, its end seen) and the listeners ran. */
  ended: Promise<void>;
  markEnded: () => void;
}

/** The exit callback of a wrapper about to be spawned, and its registration once its pid is known. */
export interface ExpectedChild {
  /** The parent reaped the wrapper (may come before register()). */
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
  /** The wrapper runs as `pid`: track it, and report an exit that came early. */
  register(pid: number, startTime: string, handle: AttemptHandle): void;
}

/** Exits seen by the parent of attempts that could not record them, kept for probe() at most. */
const MAX_SEEN_EXITS = 10_000;

/** The children of one local executor, by pid. */
export class LocalChildren {
  private readonly byPid = new Map<number, ChildEntry>();
  /**
   * How attempts ended that this executor reaped but that left no valid exit record (their
   * wrapper could not write it: a full disk), by `pid:startTime`. The parent saw the exit code,
   * so the attempt is not lost: probe() answers this instead (docs/design.md §7).
   */
  private readonly seen = new Map<string, EndResult>();

  /** The exit the parent saw of an attempt that recorded none (see `seen`), or null. */
  seenExit(handle: AttemptHandle): EndResult | null {
    const { pid, startTime } = identity(handle);
    return pid === null ? null : (this.seen.get(`${pid}:${startTime}`) ?? null);
  }

  /** The entry of `handle` while this executor is its parent and has not seen it end, else null. */
  of(handle: AttemptHandle): ChildEntry | null {
    const { pid, startTime } = identity(handle);
    if (pid === null) return null;
    const e = this.byPid.get(pid);
    return e && e.startTime === startTime ? e : null;
  }

  /** Prepares for a spawn: the exit may be reported before the spawn's answer is in. */
  expect(): ExpectedChild {
    let entry: ChildEntry | undefined;
    let early: [number | null, NodeJS.Signals | null] | undefined;
    return {
      onExit: (code, signal) => (entry ? this.reaped(entry, code, signal) : (early = [code, signal])),
      register: (pid, startTime, handle) => {
        let markEnded!: () => void;
        entry = {
          pid,
          handle,
          startTime,
          listeners: new Set(),
          ended: new Promise<void>((r) => (markEnded = r)),
          markEnded,
        };
        this.byPid.set(pid, entry);
        if (early) this.reaped(entry, ...early);
      },
    };
  }

  /** The wrapper of `entry` was reaped (by us or the launcher): report how it ended. */
  private reaped(entry: ChildEntry, code: number | null, signal: NodeJS.Signals | null): void {
    let result: EndResult;
    try {
      const rec = readExitRecord(entry.handle.attemptDir);
      if (rec && !('malformed' in rec)) result = toResult(rec);
      else if (code !== null) result = this.recordSeenExit(entry, code, rec ? rec.malformed : 'there is none');
      else result = rec ? toResult(rec) : { state: 'lost', reason: `process ${entry.pid} ended (signal ${signal}) and recorded no exit status` };
    } catch (err) {
      result = { state: 'lost', reason: `process ${entry.pid} ended but its exit file is unreadable: ${(err as Error).message}` };
    }
    this.settle(entry, result);
  }

  /**
   * The wrapper exited with `code` (it exits with the attempt's code after writing its record)
   * but left no valid record: it could not write it. The attempt ended — that is not a lost
   * attempt to re-run. Remembered for probe(), written as the record when the disk takes it.
   */
  private recordSeenExit(entry: ChildEntry, code: number, what: string): EndResult {
    const dir = entry.handle.attemptDir;
    const why = diskFull(dir) ?? 'it could not be written (disk full then, or the folder unwritable)';
    const reason = `exited with code ${code}, but its exit record could not be written: ${why} (${what})`;
    // The log pump's count survives the record: its file's space was taken when it started.
    const lost = readLostBytes(dir);
    const result: EndResult = { state: 'exited', phase: 'run', exitCode: code, endedAt: new Date(), reason, ...(lost ? { logLostBytes: lost } : {}) };
    logger().warn({ ref: entry.handle.ref, attemptDir: dir, exitCode: code }, `local executor: attempt ${entry.handle.ref} ${reason}`);
    if (this.seen.size >= MAX_SEEN_EXITS) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(`${entry.pid}:${entry.startTime}`, result);
    try {
      const tmp = path.join(dir, `${EXIT_FILE}.tmp`);
      writeFileSync(tmp, `${JSON.stringify({ phase: 'run', exitCode: code, endedAtMs: result.endedAt.getTime(), reason, ...(lost ? { logLostBytes: lost } : {}) })}\n`);
      renameSync(tmp, path.join(dir, EXIT_FILE));
    } catch {
      // Still full: the memory above answers until a restart of jobdeck.
    }
    return result;
  }

  /** Reports `result` to the entry's listeners (once) and forgets the entry. */
  settle(entry: ChildEntry, result: EndResult): void {
    if (this.byPid.get(entry.pid) === entry) this.byPid.delete(entry.pid);
    for (const l of entry.listeners) l(result);
    entry.listeners.clear();
    entry.markEnded();
  }

  /**
   * The launcher died: the wrappers `pids` run on as orphans and nobody will report their exit.
   * Each entry is forgotten (probe() must not wait for a reap) and handed to `orphaned`.
   */
  release(pids: Iterable<number>, orphaned: (entry: ChildEntry) => void): void {
    for (const pid of pids) {
      const entry = this.byPid.get(pid);
      if (!entry) continue;
      this.byPid.delete(pid);
      orphaned(entry);
    }
  }
}
