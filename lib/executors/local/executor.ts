import os from 'node:os';
import { setting } from '../../config';
import { readExitRecord, toResult, watchExitRecord } from '../attempt-record';
import { LocalChildren } from './children';
import { cancelProcessGroup } from './cancel';
import { hostIdentity } from '../../proc';
import { identity, readHandleFile } from './handle';
import { launchLocal } from './launch';
import { sampleLocal } from './usage';
import { createProcScanner, readProcStat, isLiveState, type ProcScanner } from './proc';
import { launcherFromEnv, type Launcher } from './launcher';
import { logger } from '../../log';
import type { GpuDevice } from '../../jobs/gpus';
import { stopCgroup } from './cgroup-stop';
import { attemptCgroupDirs } from './cgroup';
import { gpuHoldsReader, localGpuDevices } from './gpus';
import { localLimitsFromEnv, type LocalLimits } from './limits';
import { checkContainerRuntime, containerRuntimeFromEnv, removeContainer, type ContainerRuntime } from './container';
import type { AttemptHandle, ExitListener, Executor, LaunchRequest, LimitsStatus, ProbeResult } from '../types';

export { EXIT_FILE, HANDLE_FILE, readExitRecord, toResult, watchExitRecord, type EndResult, type ExitRecord } from '../attempt-record';
export { readHandleFile } from './handle';
export { isServerOnlyEnv, LaunchPrecheckError, resolveWorkdir, validateEnvs, WRAPPER } from '../wrapper';

/**
 * The local executor: runs each attempt as a detached bash wrapper on this machine, in its own
 * process group and session (the wrapper's pid), started by the attempt launcher so the server
 * never forks (lib/executors/local/launcher.ts; `JOBDECK_LAUNCHER=0`: by this process). The wrapper
 * writes the exit record jobdeck trusts after a restart, when it is no longer the parent.
 * Nothing essential is kept in memory: a fresh executor probes, watches and cancels from the
 * AttemptHandle alone (even from `ref` alone).
 *
 * Attempt folder (`req.attemptDir`): wrapper.sh, setup.sh, run.sh (verbatim; absent when null),
 * handle.json (readHandleFile), exit.tmp → exit (ExitRecord). The log is `req.logPath`: setup then
 * run, stdout and stderr through one descriptor opened for append, in write order. Process
 * model, environment, signals and limits: docs/design.md §7, "Executors". This module composes
 * launch.ts, children.ts, cancel.ts, handle.ts and usage.ts of this folder with the shared
 * ../attempt-record.ts and ../wrapper.ts, and answers probe, watch and capacity itself.
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
   * lib/executors/local/launcher.ts); null: this process spawns them itself (also what
   * `JOBDECK_LAUNCHER=0` selects).
   */
  launcher?: Launcher | null;
  /** How attempts are held to their resources (default: localLimitsFromEnv(), lib/executors/local/limits.ts). */
  limits?: LocalLimits;
  /** This machine's GPUs (default: localGpuDevices(): JOBDECK_LOCAL_GPUS, else nvidia-smi). */
  gpus?: readonly GpuDevice[];
  /**
   * The container runtime for `image_id: docker:…` (default: JOBDECK_CONTAINER_RUNTIME's, checked
   * to answer — an executor is not made without it; null: none). lib/executors/local/container.ts.
   */
  containers?: ContainerRuntime | null;
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
  const limits = opts.limits ?? localLimitsFromEnv();
  const gpus = opts.gpus ?? localGpuDevices();
  const gpusHeld = gpuHoldsReader(() => gpus);
  const scanner = opts.procScanner ?? createProcScanner();
  /** Attempts this instance spawned and that have not been reaped yet. */
  const children = new LocalChildren();
  /** Who forks the wrappers: the launcher process, or (null) this process itself. */
  const launcher = opts.launcher === undefined ? launcherFromEnv() : opts.launcher;
  /** JOBDECK_CPUS, read (and a malformed one refused) when the executor is made: at start. */
  const envCpus = opts.cpus === undefined ? setting('JOBDECK_CPUS') : null;
  const containers = opts.containers !== undefined ? opts.containers : containerRuntimeFromEnv();
  if (containers && opts.containers === undefined) checkContainerRuntime(containers);
  // What health and the start log say: whether image_id docker:… runs here, and with what.
  const status: LimitsStatus = containers ? { ...limits.status, notes: [...limits.status.notes, `image_id docker:… runs in containers (${containers.kind}, ${containers.bin})`] } : limits.status;
  noteLimits(status, gpus);

  // Then the attempt's control group: what escaped the process group (setsid) is stopped, the group removed.
  // A container attempt's container goes with it (docs/design.md §7 "Containers"): removed beside
  // the process group's stop, and once more when the group is gone — a keeper its enter step
  // started meanwhile goes too.
  const cancel = async (handle: AttemptHandle, cancelOpts: { graceMs?: number } = {}): Promise<void> => {
    const grace = cancelOpts.graceMs ?? 10_000;
    await Promise.all([cancelProcessGroup(handle, scanner, { ...cancelOpts, cgroupDirs: attemptCgroupDirs(handle.attemptDir) }), removeContainer(handle.attemptDir, grace)]);
    await removeContainer(handle.attemptDir, 0);
    await stopCgroup(handle.attemptDir, grace);
  };
  const gpuIndices = gpus.map((d) => d.index);
  const launch = (req: LaunchRequest): Promise<AttemptHandle> => launchLocal(req, { launcher, children, cancel, limits, gpuIndices, containers });

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
    if (handle.hostId && handle.hostId !== hostIdentity()) {
      // Another host's process: this /proc says nothing of it; only its exit record can.
      const rec = readExitRecord(dir);
      if (rec) return toResult(rec);
      return { state: 'lost', reason: `the attempt runs on another host (${handle.hostId}): not reachable from here, and it recorded no exit status` };
    }
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

  function capacity(): { cpus: number; host: true; gpus?: readonly GpuDevice[] } {
    return { cpus: opts.cpus ?? (envCpus || os.availableParallelism()), host: true, ...(gpus.length ? { gpus } : {}) };
  }

  /** The machine the attempt runs on: the host name its handle recorded (hostIdentity: name/boot id), else this one's. */
  function nodes(handle: AttemptHandle): string[] {
    const at = handle.hostId ? handle.hostId.lastIndexOf('/') : -1;
    const recorded = handle.hostId && at > 0 ? handle.hostId.slice(0, at) : handle.hostId;
    return [recorded || os.hostname()];
  }

  return {
    name: 'local',
    launch,
    probe,
    watch,
    cancel,
    capacity,
    nodes,
    findHandle: readHandleFile,
    limits: () => status,
    gpusHeld,
    sample: (handles) => sampleLocal(scanner, handles),
    isParentOf: (handle) => children.of(handle) !== null,
  };
}

/** Says once, when the executor is made, how attempts are held to their resources (never a silent pretend). */
function noteLimits(status: LimitsStatus, gpus: readonly GpuDevice[]): void {
  const gpuText = gpus.length ? `; ${gpus.length} GPU${gpus.length === 1 ? '' : 's'}: ${gpus.map((d) => `${d.index}${d.type ? ` ${d.type}` : ''}`).join(', ')}` : '';
  if (status.cgroups === null) logger().warn({ limits: status }, `local executor: ${status.notes.join('; ')}${gpuText}`);
  else logger().info({ limits: status }, `local executor: each attempt in its own control group (cgroup ${status.cgroups}: ${status.enforced.join(', ')})${gpuText}${status.notes.length ? `; ${status.notes.join('; ')}` : ''}`);
}
