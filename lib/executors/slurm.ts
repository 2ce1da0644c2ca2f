import { readExitRecord, toResult, watchExitRecord } from './attempt-record';
import { slurmCapacity } from './slurm-capacity';
import { cancelSlurmJob } from './slurm-cancel';
import { ACTIVE_STATES, describeEnd, jobIdOf, sacctSays, viewJob } from './slurm-cli';
import { launchSlurm, readSlurmHandleFile } from './slurm-launch';
import type { AttemptHandle, ExitListener, Executor, LaunchRequest, ProbeResult } from './types';

export { BATCH_FILE, parseScontrolJob, SlurmUnavailableError, type SlurmJobInfo } from './slurm-cli';
export { ENV_FILE, readSlurmHandleFile, slurmJobName, slurmOutputPattern } from './slurm-launch';

/**
 * The Slurm executor: runs each attempt as a Slurm batch job (`sbatch`), for work that needs more
 * than one machine. Same attempt semantics as the local executor (lib/executors/local.ts): the
 * same bash wrapper runs setup then run with the task's envs plus JOBDECK_JOB_ID /
 * JOBDECK_TASK_INDEX / JOBDECK_ATTEMPT, appends stdout and stderr in order to `req.logPath`, and
 * records `<attemptDir>/exit` (`{"phase","exitCode","endedAtMs"[,"reason"]}`, see ExitRecord);
 * setup failing ends the attempt with `phase: "setup"` (FAILED_SETUP).
 *
 * Requirements: the Slurm client commands (sbatch, scontrol, scancel, sinfo, sacct) on PATH, a
 * controller that answers, and `attemptDir` / `logPath` on a file system the compute nodes share
 * with jobdeck (always true on the one-node cluster of scripts/slurm-up.sh). Jobs run as the user
 * jobdeck runs as.
 *
 * Attempt folder (`req.attemptDir`, mode 0700, created by launch):
 *   batch.sh     the batch script given to sbatch (static text; the handle's reuse guard: Slurm
 *                shows it as `Command=`)
 *   wrapper.sh   the local executor's wrapper (WRAPPER), run by batch.sh with `bash -p`
 *   env          mode 0600: the task's envs and JOBDECK_JOB_ID/TASK_INDEX/ATTEMPT as NUL-separated
 *                `NAME=value` records, exported by batch.sh — values of any bytes (but NUL) reach
 *                the task verbatim; nothing is interpolated into a script, and the task's envs
 *                never reach sbatch itself (a task's SBATCH_* cannot change the submission)
 *   setup.sh, run.sh, handle.json, exit — as locally.
 *
 * sbatch: `--parsable --job-name=jobdeck-<job>-<task>-<attempt> --output=<logPath>
 * --open-mode=append --chdir=<attemptDir> --nodes=1 --ntasks=1 --cpus-per-task=ceil(cpus)
 * --no-requeue --export=ALL [--partition=P] batch.sh <attemptDir> <logPath> <workdir> <hasSetup>
 * <hasRun>`, started with the server's environment minus jobdeck's own settings (isServerOnlyEnv),
 * which Slurm passes to the job as its base environment (plus SLURM_*). `%` in the log path is
 * escaped (`%%`) so Slurm's filename patterns do not apply; a log path Slurm cannot represent (it
 * strips backslashes) gets `--output=/dev/null` and only the wrapper writes the log. The log's
 * folder is created first (Slurm does not create it; measured: FAILED, JobLaunchFailure 0:53).
 * `--no-requeue`: Slurm never reruns an attempt behind jobdeck's back after a node failure —
 * jobdeck's own recovery starts a new attempt instead (docs/design.md, "Executors").
 *
 * probe: the exit file first (the truth); else the controller: `scontrol ping` (4 ms; a down
 * controller otherwise costs 9–18 s per command), then `scontrol -o show job ID`:
 * - PENDING, CONFIGURING, RUNNING, COMPLETING, SUSPENDED, REQUEUED… → running;
 * - ended (COMPLETED, FAILED, CANCELLED, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE, TIMEOUT,
 *   OUT_OF_MEMORY…) → the exit file is read again (it may have landed in between); without it
 *   → lost, with Slurm's state and exit code in the reason (recovery, not the user's restart);
 * - unknown ("Invalid job id": purged after MinJobAge, or the controller's state was wiped), or
 *   the id now names another job (its Command is not this attempt's batch.sh) → lost, with what
 *   sacct still knows in the reason;
 * - controller down or not answering → throws {@link SlurmUnavailableError} (`transient: true`):
 *   a temporary condition the caller retries; it never means the attempt is lost.
 *
 * cancel: `scancel --signal=TERM --full` (batch script and every process of the job: the
 * wrapper traps TERM, records 143 and does not start run after a signal during setup), then after
 * `graceMs` `scancel --batch --signal=KILL` (SIGKILL to the batch step at once; a plain
 * `scancel --signal=KILL` is a job cancel in Slurm: TERM first, KILL only after KillWait) and
 * `scancel` (the job and any other steps); resolves when scontrol no longer shows the job active.
 * A pending job is simply `scancel`ed (it never ran: probe says lost). Which processes a signal
 * reaches is the cluster's ProctrackType: proctrack/cgroup or /pgid reach every process of the
 * attempt (scripts/slurm-up.sh uses pgid, like the local executor's process group);
 * proctrack/linuxproc loses processes whose parent died (measured: they outlive the job).
 *
 * Nothing essential is kept in memory: a fresh executor probes, watches and cancels from the
 * AttemptHandle (`ref` = the Slurm job id, `attemptDir`) alone. Models: SkyPilot's Slurm support
 * (`infra: slurm`) and Ray's job submission on Slurm run each job as one batch allocation.
 *
 * Limits: one node per task (SkyPilot `num_nodes: 1`); no memory request (LaunchRequest carries
 * none); a crash of jobdeck between sbatch's answer and the handle reaching the database leaves
 * handle.json behind (see readSlurmHandleFile), but a crash before handle.json is written leaves
 * a job jobdeck does not know (it finds it by name: `squeue -n jobdeck-<job>-<task>-<attempt>`).
 *
 * This module composes the parts: the controller's commands and their output (slurm-cli.ts),
 * sbatch launch (slurm-launch.ts), cancel (slurm-cancel.ts), the CPU count (slurm-capacity.ts),
 * and what it shares with the local executor: the wrapper (wrapper.ts), the exit record and its
 * watch (attempt-record.ts). It answers probe and watch itself.
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
  const partition = opts.partition ?? (process.env.JOBDECK_SLURM_PARTITION || undefined);
  const pollMs = opts.pollMs ?? 2000;
  const capacityTtlMs = opts.capacityTtlMs ?? 10_000;
  const cancelPollMs = opts.cancelPollMs ?? 200;

  const launch = (req: LaunchRequest): Promise<AttemptHandle> => launchSlurm(req, partition);
  const cancel = (handle: AttemptHandle, cancelOpts: { graceMs?: number } = {}): Promise<void> => cancelSlurmJob(handle, cancelPollMs, cancelOpts);
  const capacity = slurmCapacity(partition, capacityTtlMs);

  async function probe(handle: AttemptHandle): Promise<ProbeResult> {
    const dir = handle.attemptDir;
    const first = readExitRecord(dir);
    if (first) return toResult(first);
    const id = jobIdOf(handle);
    if (id === null) return { state: 'lost', reason: `the handle ${JSON.stringify(handle.ref)} names no Slurm job` };
    const view = await viewJob(id, dir);
    if (view.kind === 'known' && ACTIVE_STATES.has(view.info.state)) return { state: 'running' };
    // Ended or gone: the exit file may have been renamed into place in between.
    const second = readExitRecord(dir);
    if (second) return toResult(second);
    if (view.kind === 'known') return { state: 'lost', reason: `Slurm job ${id} ended ${describeEnd(view.info)} and recorded no exit status` };
    if (view.kind === 'reused') {
      return { state: 'lost', reason: `Slurm job id ${id} now names another job (${view.info.command ?? 'no command'}); this attempt recorded no exit status` };
    }
    const acct = await sacctSays(id);
    return { state: 'lost', reason: `Slurm job ${id} is unknown to the controller${acct ? ` (${acct})` : ''} and recorded no exit status` };
  }

  function watch(handle: AttemptHandle, listener: ExitListener): () => void {
    // The scheduler, not jobdeck, is the parent: the folder watch and the poll (which also sees
    // `lost`, and exit files written on another node that inotify does not report).
    return watchExitRecord(handle, listener, { name: 'slurm executor', probe, pollMs });
  }

  return { name: 'slurm', launch, probe, watch, cancel, capacity, findHandle: readSlurmHandleFile };
}
