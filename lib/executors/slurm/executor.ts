import { setting } from '../../config';
import { readExitRecord, readHostsFile, toResult, watchExitRecord } from '../attempt-record';
import { slurmCapacity } from './capacity';
import { cancelSlurmJob } from './cancel';
import { ACTIVE_STATES, describeEnd, jobIdOf, limitOfJob, limitOfState, pendingReasons, sacctSays, slurmExitCode, SlurmUnavailableError, viewJob } from './cli';
import { launchSlurm, readSlurmHandleFile } from './launch';
import { sampleSlurm } from './usage';
import type { AttemptHandle, ExitListener, Executor, LaunchRequest, ProbeResult } from '../types';

export { BATCH_FILE, parseScontrolJob, SlurmUnavailableError, type SlurmJobInfo } from './cli';
export { ENV_FILE, readSlurmHandleFile, slurmJobName, slurmOutputPattern } from './launch';

/**
 * The Slurm executor: runs each attempt as one Slurm batch job (`sbatch`) that runs the same
 * wrapper as the local executor, so an attempt means the same on both (setup then run, the same
 * envs, one log, the exit record as the truth). `--no-requeue`: only jobdeck's recovery starts a
 * new attempt. A controller that does not answer throws SlurmUnavailableError (`transient:
 * true`), never "lost". Nothing essential is kept in memory: a fresh executor probes, watches and
 * cancels from the AttemptHandle (`ref` = the Slurm job id, `attemptDir`) alone.
 *
 * The attempt folder, the sbatch command, what each Slurm state means to probe(), cancel's
 * signals, the cluster it needs and its limits: docs/slurm.md. Parts: the controller's commands
 * (cli.ts), launch (launch.ts), a multi-node attempt's batch and rank scripts (gang.ts), a job
 * group's heterogeneous job (group.ts), cancel (cancel.ts), the CPU and node count (capacity.ts), usage (usage.ts); shared with the local
 * executor: ../wrapper.ts, ../attempt-record.ts.
 */

/** Options of createSlurmExecutor. */
export interface SlurmExecutorOptions {
  /** Partition for sbatch and capacity; default `JOBDECK_SLURM_PARTITION`, else Slurm's default partition. */
  partition?: string;
  /** Interval of watch()'s fallback poll (ms, default 2000): sees `lost`, and exit files inotify misses (NFS). */
  pollMs?: number;
  /** How long capacity() reuses the CPU count (ms, default 10000). */
  capacityTtlMs?: number;
  /** Interval of the state checks while cancel() waits (ms, default 200). */
  cancelPollMs?: number;
}

/**
 * Creates a Slurm executor (see the module doc). The server's is its registry's
 * (lib/executors/index.ts createExecutors); create others only in tests.
 */
export function createSlurmExecutor(opts: SlurmExecutorOptions = {}): Executor {
  const partition = opts.partition ?? setting('JOBDECK_SLURM_PARTITION') ?? undefined;
  const pollMs = opts.pollMs ?? 2000;
  const capacityTtlMs = opts.capacityTtlMs ?? 10_000;
  const cancelPollMs = opts.cancelPollMs ?? 200;

  const launch = (req: LaunchRequest): Promise<AttemptHandle> => launchSlurm(req, partition);
  const cancel = (handle: AttemptHandle, cancelOpts: { graceMs?: number } = {}): Promise<void> => cancelSlurmJob(handle, cancelPollMs, cancelOpts);
  const capacity = slurmCapacity(partition, capacityTtlMs);

  async function probe(handle: AttemptHandle): Promise<ProbeResult> {
    const dir = handle.attemptDir;
    const id = jobIdOf(handle);
    const first = readExitRecord(dir);
    if (first) return withLimit(toResult(first), id, dir);
    if (id === null) return { state: 'lost', reason: `the handle ${JSON.stringify(handle.ref)} names no Slurm job` };
    const view = await viewJob(id, dir);
    if (view.kind === 'known' && ACTIVE_STATES.has(view.info.state)) return { state: 'running' };
    // Ended or gone: the exit file may have been renamed into place in between.
    const second = readExitRecord(dir);
    if (second) return withLimit(toResult(second), id, dir);
    if (view.kind === 'known') {
      // Stopped at a limit before the wrapper could record anything: the limit's end, not a loss.
      const limit = limitOfState(view.info.state);
      if (limit) return { state: 'exited', phase: 'run', exitCode: slurmExitCode(view.info), endedAt: new Date(), limit, reason: `Slurm ${view.info.state}` };
      return { state: 'lost', reason: `Slurm job ${id} ended ${describeEnd(view.info)} and recorded no exit status` };
    }
    if (view.kind === 'reused') {
      return { state: 'lost', reason: `Slurm job id ${id} now names another job (${view.info.command ?? 'no command'}); this attempt recorded no exit status` };
    }
    const acct = await sacctSays(id);
    return { state: 'lost', reason: `Slurm job ${id} is unknown to the controller${acct ? ` (${acct})` : ''} and recorded no exit status` };
  }

  /**
   * A recorded failure Slurm itself caused — its time limit (TIMEOUT: the wrapper saw the SIGTERM
   * and recorded 143, while the job was COMPLETING with the reason TimeLimit) or memory
   * (OUT_OF_MEMORY) — says so (`limit`), from Slurm's own state and reason. One look at the
   * controller, for failures only. An exit record needs no controller: while it does not answer,
   * the record is the attempt's end as it says it (the limit unsaid) — the monitor must not wait
   * on a down controller for an attempt that ended.
   */
  async function withLimit(r: ReturnType<typeof toResult>, id: string | null, dir: string): Promise<ProbeResult> {
    if (r.state !== 'exited' || r.exitCode === 0 || r.limit || id === null) return r;
    try {
      const view = await viewJob(id, dir);
      const state = view.kind === 'known' ? null : ((await sacctSays(id))?.split(' ')[1] ?? null);
      const limit = view.kind === 'known' ? limitOfJob(view.info) : state ? limitOfState(state) : null;
      return limit ? { ...r, limit } : r;
    } catch (err) {
      if (err instanceof SlurmUnavailableError) return r;
      throw err;
    }
  }

  function watch(handle: AttemptHandle, listener: ExitListener): () => void {
    // The scheduler, not jobdeck, is the parent: the folder watch and the poll (which also sees
    // `lost`, and exit files written on another node that inotify does not report).
    return watchExitRecord(handle, listener, { name: 'slurm executor', probe, pollMs });
  }

  /** Slurm's PENDING jobs among the refs, with Slurm's reason (one squeue call: cli.ts pendingReasons). */
  const held = (refs: readonly string[]): Promise<Map<string, string>> => pendingReasons(refs.filter((r) => /^\d+$/.test(r)));

  /** The allocated nodes, as the batch script recorded them when it started (null before). */
  const nodes = (handle: AttemptHandle): string[] | null => readHostsFile(handle.attemptDir);

  // Slurm stops a job at its --time (max_duration) itself: the monitor only reads TIMEOUT.
  return { name: 'slurm', stopsAtMaxDuration: true, launch, probe, watch, cancel, capacity, held, nodes, findHandle: readSlurmHandleFile, sample: sampleSlurm };
}
