import os from 'node:os';
import { readExitRecord, toResult, watchExitRecord } from './attempt-record';
import { LocalChildren } from './local-children';
import { cancelProcessGroup } from './local-cancel';
import { identity, readHandleFile } from './local-handle';
import { launchLocal } from './local-launch';
import { createProcScanner, readProcStat, isLiveState, type ProcScanner } from './proc';
import { launcherFromEnv, type Launcher } from './launcher';
import type { AttemptHandle, ExitListener, Executor, LaunchRequest, ProbeResult } from './types';

export { EXIT_FILE, HANDLE_FILE, readExitRecord, toResult, watchExitRecord, type EndResult, type ExitRecord } from './attempt-record';
export { readHandleFile } from './local-handle';
export { isServerOnlyEnv, resolveWorkdir, validateEnvs, WRAPPER } from './wrapper';

/**
 * The local executor: runs each attempt as a detached bash wrapper on this machine.
 *
 * Attempt folder layout (`req.attemptDir`, created by launch):
 *   wrapper.sh   the wrapper (same text for every attempt; all inputs come as arguments/env)
 *   setup.sh     the task's setup script, verbatim (absent when setup is null)
 *   run.sh       the task's run script, verbatim (absent when run is null)
 *   handle.json  the AttemptHandle, written right after the spawn (see readHandleFile)
 *   exit.tmp     transient: the exit record being written
 *   exit         the exit record, one JSON line, renamed into place atomically (see ExitRecord)
 * The log file is `req.logPath` (anywhere; its folder is created): setup then run, stdout and
 * stderr through one file descriptor opened for append, so lines keep their write order.
 *
 * Process model: the wrapper is spawned with setsid() (detached), stdio on /dev/null — by the
 * attempt launcher, a small child process of the server (lib/executors/launcher.ts; the server
 * never forks itself), or by this process when the launcher is off (`JOBDECK_LAUNCHER=0`). Its
 * parent (launcher or server) reaps it and reports the exit at once; when that parent is gone,
 * the exit record is watched instead. Its pid is the attempt's process group AND session id.
 * setup and run run as `bash <file>` in `workdir`, in that group. The environment is the server's own minus jobdeck's configuration
 * (isServerOnlyEnv), plus the task's envs, plus JOBDECK_JOB_ID / JOBDECK_TASK_INDEX /
 * JOBDECK_ATTEMPT (these win). The wrapper traps SIGTERM/SIGINT/SIGHUP: it waits for the running
 * phase, records its code (143 for a child that died of SIGTERM) and does not start run after a
 * signal during setup. An attempt that had to be SIGKILLed records nothing (probe: lost) — the
 * caller knows it asked for the cancel.
 *
 * Limits: a process that calls setsid() itself leaves the attempt's session and escapes cancel
 * (as with Ray and SkyPilot, which also kill by process group). When the wrapper alone dies
 * (OOM killer, kill -9 of its pid) the attempt is `lost` while its children may still run: call
 * cancel(handle) on a lost attempt to stop them before starting a recovery. The monitor calls
 * cancel() after every attempt's end for that reason (leftovers such as `sleep 300 &`): on a
 * finished attempt it costs one /proc scan (shared with concurrent cancels, yielding to the event
 * loop) and sends no signal when nothing is left.
 *
 * Nothing essential is kept in memory: a fresh executor (after a jobdeck restart) can probe,
 * watch and cancel an attempt from its AttemptHandle alone (even from `ref` alone). Model: Ray's
 * job supervisor and SkyPilot's job driver also run the job in its own process group and kill
 * that group on stop.
 *
 * This module composes the parts: launch (local-launch.ts), the children it is the parent of
 * (local-children.ts), cancel (local-cancel.ts), the handle (local-handle.ts), the exit record and
 * its watch (attempt-record.ts) and the wrapper (wrapper.ts); it answers probe, watch and
 * capacity itself (docs/design.md, "Executors").
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
    isParentOf: (handle) => children.of(handle) !== null,
  };
}
