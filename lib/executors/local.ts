import os from 'node:os';
import { readExitRecord, toResult, watchExitRecord } from './attempt-record';
import { LocalChildren } from './local-children';
import { cancelProcessGroup } from './local-cancel';
import { identity, readHandleFile } from './local-handle';
import { launchLocal } from './local-launch';
import { sampleLocal } from './local-usage';
import { createProcScanner, readProcStat, isLiveState, type ProcScanner } from './proc';
import { launcherFromEnv, type Launcher } from './launcher';
import type { AttemptHandle, ExitListener, Executor, LaunchRequest, ProbeResult } from './types';

export { EXIT_FILE, HANDLE_FILE, readExitRecord, toResult, watchExitRecord, type EndResult, type ExitRecord } from './attempt-record';
export { readHandleFile } from './local-handle';
export { isServerOnlyEnv, LaunchPrecheckError, resolveWorkdir, validateEnvs, WRAPPER } from './wrapper';

/**
 * The local executor: runs each attempt as a detached bash wrapper on this machine, in its own
 * process group and session (the wrapper's pid), started by the attempt launcher so the server
 * never forks (lib/executors/launcher.ts; `JOBDECK_LAUNCHER=0`: by this process). The wrapper
 * writes the exit record jobdeck trusts after a restart, when it is no longer the parent.
 * Nothing essential is kept in memory: a fresh executor probes, watches and cancels from the
 * AttemptHandle alone (even from `ref` alone).
 *
 * Attempt folder (`req.attemptDir`): wrapper.sh, setup.sh, run.sh (verbatim; absent when null),
 * handle.json (readHandleFile), exit.tmp → exit (ExitRecord). The log is `req.logPath`: setup then
 * run, stdout and stderr through one descriptor opened for append, in write order. Process
 * model, environment, signals and limits: docs/design.md §7, "Executors". This module composes
 * local-launch.ts, local-children.ts, local-cancel.ts, local-handle.ts, attempt-record.ts and
 * wrapper.ts, and answers probe, watch and capacity itself.
 */

/** Options of createLocalExecutor. */
export interface LocalExecutorOptions {
  /** CPU budget; default `JOBDECK_CPUS` or `os.availableParallelism()`. */
  cpus?: number;
  /** Interval of the fallback poll of watch() for attempts this process is not the parent of (ms, default 1000). */
  pollMs?: number;
  /**
   * Test seams to force interleavings (never set in production). `afterFirstExitRead` runs in
   * probe() between the first read of the exit file (found nothing) and the process-table check.
   */
  hooks?: { afterFirstExitRead?: (handle: AttemptHandle) => void | Promise<void> };
  /**
   * The process-table scanner cancel() uses (default: this executor's own createProcScanner()):
   * concurrent cancels share its `/proc` scans. Tests inject a counting one.
   */
  procScanner?: ProcScanner;
  /**
   * Who spawns the wrappers (default: this executor's own launcherFromEnv(),
   * lib/executors/launcher.ts); null: this process spawns them itself (also what
   * `JOBDECK_LAUNCHER=0` selects).
   */
  launcher?: Launcher | null;
}

/** Like a sleep, but does not keep the process alive. */
const idle = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** The local executor plus what tests and recovery may want to inspect. */
export interface LocalExecutor extends Executor {
  /** True while this instance is the parent of the attempt and has not seen it exit. */
  isParentOf(handle: AttemptHandle): boolean;
}

/**
 * Creates a local executor (see the module doc for the attempt folder). The server's is its
 * registry's (lib/executors/index.ts createExecutors); create others only in tests.
 */
export function createLocalExecutor(opts: LocalExecutorOptions = {}): LocalExecutor {
  const pollMs = opts.pollMs ?? 1000;
  const scanner = opts.procScanner ?? createProcScanner();
  /** Attempts this instance spawned and that have not been reaped yet. */
  const children = new LocalChildren();
  /** Who forks the wrappers: the launcher process, or (null) this process itself. */
  const launcher = opts.launcher === undefined ? launcherFromEnv() : opts.launcher;

  const cancel = (handle: AttemptHandle, cancelOpts: { graceMs?: number } = {}): Promise<void> => cancelProcessGroup(handle, scanner, cancelOpts);
  const launch = (req: LaunchRequest): Promise<AttemptHandle> => launchLocal(req, { launcher, children, cancel });

  // The launcher died: its wrappers run on as orphans, and nobody will report their exit. Watch
  // their exit records instead (as for an attempt of an earlier server) and tell the listeners.
  launcher?.onDeath((pids) => {
    children.release(pids, (entry) => {
      watchExitRecord(entry.handle, (r) => children.settle(entry, r), { name: 'local executor', probe, pollMs });
    });
  });

  async function probe(handle: AttemptHandle): Promise<ProbeResult> {
    const dir = handle.attemptDir;
    const first = readExitRecord(dir);
    if (first && !('malformed' in first)) return toResult(first);
    // Reaped here without a valid record (it could not be written): the exit this process saw.
    const seen = children.seenExit(handle);
    if (seen) return seen;
    if (first) return toResult(first);
    await opts.hooks?.afterFirstExitRead?.(handle);
    const { pid, startTime } = identity(handle);
    if (pid === null) return { state: 'lost', reason: `the handle ${JSON.stringify(handle.ref)} names no process` };
    const stat = readProcStat(pid);
    if (stat && stat.startTime === startTime) {
      if (isLiveState(stat.state)) return { state: 'running' };
      // Our own unreaped zombie: its exit is about to be reported; wait for the reap first.
      const own = children.of(handle);
      if (own) await Promise.race([own.ended, idle(5000)]);
    }
    // Gone (or a zombie): the exit file may have been renamed in between the two reads.
    const second = readExitRecord(dir);
    if (second && !('malformed' in second)) return toResult(second);
    const seenNow = children.seenExit(handle);
    if (seenNow) return seenNow;
    if (second) return toResult(second);
    if (!stat) return { state: 'lost', reason: `process ${pid} is gone and recorded no exit status` };
    if (stat.startTime !== startTime) {
      return { state: 'lost', reason: `pid ${pid} was reused by another process (start time ${stat.startTime}, expected ${startTime})` };
    }
    return { state: 'lost', reason: `process ${pid} exited without recording an exit status` };
  }

  function watch(handle: AttemptHandle, listener: ExitListener): () => void {
    return watchExitRecord(handle, listener, {
      name: 'local executor',
      probe,
      pollMs,
      // We are the parent: the child's 'exit' event is the immediate notification.
      direct: (fire) => {
        const own = children.of(handle);
        if (!own) return null;
        own.listeners.add(fire);
        return () => own.listeners.delete(fire);
      },
    });
  }

  function capacity(): { cpus: number } {
    return { cpus: opts.cpus ?? (Number(process.env.JOBDECK_CPUS) || os.availableParallelism()) };
  }

  return {
    name: 'local',
    launch,
    probe,
    watch,
    cancel,
    capacity,
    findHandle: readHandleFile,
    sample: (handles) => sampleLocal(scanner, handles),
    isParentOf: (handle) => children.of(handle) !== null,
  };
}
