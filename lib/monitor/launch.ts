import { setting } from '../config';
import path from 'node:path';
import type { Attempt, Job, Task } from '../generated/prisma/client';
import type { LaunchGroup, ProbeResult } from '../executors/types';
import { fileMountPath, placeFileMounts, uploadedWorkdir, type FileMountUpload } from '../uploads/upload';
import { resolveWorkdir } from '../executors/wrapper';
import { attemptGpus, grantedGpus, readGrant, type AttemptGpus, type GpuGrant } from '../jobs/gpus';
import { attemptLogPath, dataFolder, jobDir } from '../jobs/paths';
import { taskHostEnv } from '../jobs/spec/task-graph-spec';
import { diskFull } from '../proc';
import type { TaskStatus } from '../jobs/status';
import { isPrecheckError, isTransientExecutorError } from './errors';
import type { ReapSystem } from './reap';
import { errMessage, now, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { AnyTransition, Transition, TransitionOutcome } from './store-view';
import { runAsPart } from './run-as';
import { readTaskSpec } from './taskspec';
import type { JobRow, Next, StepPhase, TaskRow } from './types';
import type { Writes } from './writes';

/**
 * New attempts (docs/design.md §6): a task's first attempt, a restart's or a recovery's,
 * created by one guarded write with the job's move to STARTING, then handed to the executor
 * once nothing of an earlier attempt of the job runs (reaps awaited). A launch that throws is a
 * lost attempt (recovery, not the user's restart), or, when the task's own spec makes it
 * impossible (`precheck`), the task's end as FAILED_PRECHECKS; a launch the executor refuses only for now
 * (its backend is temporarily unavailable) is tried again with backoff, spending no budget
 * (docs/design.md §5 rule 6, transient errors retried).
 */

/** A new attempt of a task: its number, why it starts, and the writes that go with it. */
export interface AttemptPlan {
  number: number;
  cause: 'first' | 'restart' | 'recovery';
  /** The task's status as read (→ STARTING). */
  taskFrom: TaskStatus;
  reason: string;
  taskData?: Transition<'task'>['data'];
  /** Writes applied before, in the same statement (the previous attempt's end). */
  before?: AnyTransition[];
  /** The probe result the decision acts on (for the hook). */
  observed?: ProbeResult;
  /**
   * 'restart': the task's restarts grow by one (the job's restartCount with them); 'exitCode': its
   * restarts on a recover_on_exit_codes code (exitCodeRestarts, the job's exitCodeRestartCount).
   */
  counted?: 'restart' | 'exitCode';
  /**
   * The GPUs admission granted the job (its first attempt only): recorded on the job in the same
   * write (Job.gpuGrant), held by every attempt of it until it ends. Absent: the job's own.
   */
  grant?: GpuGrant | null;
}

/** An attempt's GPUs as recorded on its row (Attempt.gpuGrant), for the launch request. */
function recordedGpus(v: unknown): AttemptGpus | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const g = v as Partial<AttemptGpus>;
  if (typeof g.type !== 'string' || typeof g.count !== 'number') return undefined;
  return { type: g.type, count: g.count, ...(Array.isArray(g.devices) ? { devices: g.devices } : {}) };
}

/** The content hash of the folder uploaded with a job (Job.launch.workdirUpload), or null. */
function workdirUploadOf(launch: unknown): string | null {
  const h = launch && typeof launch === 'object' ? (launch as { workdirUpload?: unknown }).workdirUpload : undefined;
  return typeof h === 'string' ? h : null;
}

/** The uploads of this task's `file_mounts` targets (Job.launch.fileMountUploads), or null when none. */
function fileMountsOf(launch: unknown, targets: Record<string, string> | undefined): Record<string, FileMountUpload> | null {
  const all = launch && typeof launch === 'object' ? (launch as { fileMountUploads?: unknown }).fileMountUploads : undefined;
  if (!targets || !all || typeof all !== 'object') return null;
  const out: Record<string, FileMountUpload> = {};
  for (const t of Object.keys(targets)) {
    const up = (all as Record<string, FileMountUpload | undefined>)[t];
    if (up) out[t] = up;
  }
  return Object.keys(out).length ? out : null;
}

/**
 * The job group a task's launch belongs to (LaunchRequest.group: the group's folder and every
 * task's shape, from the job's stored spec), or undefined for a pipeline or DAG.
 */
export function launchGroupOf(job: Pick<Job, 'id' | 'spec' | 'cpus'>, home: string | undefined): LaunchGroup | undefined {
  const spec = (job.spec && typeof job.spec === 'object' ? job.spec : {}) as { execution?: unknown; tasks?: unknown };
  if (spec.execution !== 'parallel' || !Array.isArray(spec.tasks)) return undefined;
  return {
    dir: path.join(jobDir(job.id, home), 'group'),
    tasks: spec.tasks.map((t: unknown) => {
      const r = readTaskSpec(t, job.cpus);
      const name = t && typeof t === 'object' ? (t as { name?: unknown }).name : undefined;
      return {
        hostEnv: taskHostEnv(typeof name === 'string' ? name : ''),
        cpus: r.cpus,
        ...(r.memoryBytes !== undefined ? { memoryBytes: r.memoryBytes } : {}),
        ...(r.maxDurationMs !== undefined ? { maxDurationMs: r.maxDurationMs } : {}),
      };
    }),
  };
}

function isUniqueViolation(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as { code?: unknown }).code === 'P2002';
}

/** Creates and launches attempts (see the module comment). */
export class LaunchSystem {
  /** When waitForDisk last logged (ms since epoch). */
  private diskWarnedAt = 0;

  constructor(
    private readonly res: MonitorResources,
    private readonly writes: Writes,
    private readonly reap: ReapSystem,
  ) {}

  /**
   * Starts the first attempt of a PENDING task (or succeeds it at once when it has nothing to
   * run). `written`: called once the STARTING write is done (applied or not), before the launch.
   */
  launchTask(job: JobRow, task: TaskRow, e: JobEntry, phase: StepPhase, written?: () => void, grant?: GpuGrant | null): Promise<Next> {
    const spec = readTaskSpec(task.spec, job.cpus);
    if (spec.run === null && spec.setup === null) {
      return this.writes
        .decide(job)
        .task(task, 'SUCCEEDED', 'nothing to run', { startedAt: now(this.res), endedAt: now(this.res) })
        .deriveJob(`task ${task.index} had nothing to run`)
        .write('nothing-to-run');
    }
    return this.newAttempt(job, task, e, phase, { number: 1, cause: 'first', taskFrom: 'PENDING', reason: phase === 'admit' ? 'admitted' : `task ${task.index} starts`, ...(grant !== undefined ? { grant } : {}) }, written);
  }

  /**
   * Creates attempt `a.number` of `task` (guarded, with `a.before` and the job's move to
   * STARTING in the same transaction) and launches it. The RUNNING write happens in the next
   * iteration, after a fresh probe. Always 'again'. `written`: see launchTask().
   */
  async newAttempt(job: JobRow, task: TaskRow, e: JobEntry, phase: StepPhase, a: AttemptPlan, written?: () => void): Promise<Next> {
    // An attempt on a full disk could write neither its log nor its exit record: it waits, and
    // says why (health says so too), instead of starting only to be lost.
    const full = diskFull(dataFolder(this.res.home));
    if (full) {
      this.waitForDisk(job.id, full);
      return 'idle';
    }
    const logPath = attemptLogPath(job.id, task.index, a.number, this.res.home);
    const after = new Map<number, TaskStatus>([[task.id, 'STARTING']]);
    const restarts = new Map<number, number>();
    const exitCodeRestarts = new Map<number, number>();
    if (a.counted === 'restart') restarts.set(task.id, task.restarts + 1);
    const grant = a.grant !== undefined ? a.grant : readGrant(job.gpuGrant);
    const spec = readTaskSpec(task.spec, job.cpus);
    const gpus = attemptGpus(spec.gpus, grant);
    // A job's first attempt records the devices admission granted it; they are held until it ends.
    const granted = a.grant ? { gpuGrant: a.grant as never, gpus: grantedGpus(a.grant) } : {};
    if (a.counted === 'exitCode') exitCodeRestarts.set(task.id, task.exitCodeRestarts + 1);
    const jt = this.writes.jobTransition(job, after, a.reason, { data: { currentTask: task.index, ...granted }, restarts, exitCodeRestarts });
    let res: TransitionOutcome<Attempt>;
    try {
      res = await this.writes.guarded({ jobId: job.id, phase, job, observed: a.observed }, () =>
        this.res.store.startAttempt({
          taskId: task.id,
          number: a.number,
          cause: a.cause,
          executor: job.executor,
          logPath,
          ...(gpus ? { gpus: (gpus.devices ? grantedGpus({ ...gpus, devices: gpus.devices }) : gpus.count) * spec.nodes, gpuGrant: gpus } : {}),
          taskFrom: a.taskFrom,
          reason: a.reason,
          taskData: a.taskData,
          before: a.before,
          after: jt ? [jt] : [],
        }, job),
      );
    } catch (err) {
      if (isUniqueViolation(err)) {
        this.res.log.info({ jobId: job.id }, `job ${job.id}: attempt ${a.number} of task ${task.index} already exists; re-reading`);
        return 'again';
      }
      throw err;
    } finally {
      written?.();
    }
    this.reap.start(job.id);
    if (res.outcome !== 'applied') return this.writes.outcome(job, phase, res);
    if (a.cause === 'restart') this.res.counters.restarts++;
    await this.launchAttempt(job, task, res.row, e);
    return 'again';
  }

  /**
   * An attempt waiting to be launched again (its executor was temporarily unavailable): null
   * when there is none, 'idle' before its time, else it is launched now ('again').
   */
  async relaunchDue(job: Job, task: Task, att: Attempt, e: JobEntry): Promise<Next | null> {
    const relaunch = e.relaunch.get(att.id);
    if (!relaunch || att.status !== 'STARTING' || e.handles.has(att.id)) return null;
    if (this.res.clock.now() < relaunch.at) return 'idle';
    await this.launchAttempt(job, task, att, e);
    return 'again';
  }

  /**
   * Starts an attempt row (STARTING) on its executor. A launch error is noted in
   * `e.launchErrors` (the next iteration settles the attempt as lost); a transient executor
   * error in `e.relaunch` (launched again after a backoff).
   */
  private async launchAttempt(job: Job, task: Task, attempt: Attempt, e: JobEntry): Promise<void> {
    const spec = readTaskSpec(task.spec, job.cpus);
    const gpus = recordedGpus(attempt.gpuGrant);
    const logPath = attempt.logPath ?? attemptLogPath(job.id, task.index, attempt.number, this.res.home);
    const executor = this.res.executor(attempt.executor);
    // Nothing of an earlier attempt of this job may run beside the new one.
    await this.reap.awaitJob(job.id);
    try {
      e.launchedAt.set(attempt.id, now(this.res));
      // As whom it runs, and its token (docs/design.md §16): before anything is placed for it.
      const runAs = await runAsPart(this.res, job, task.index, attempt);
      const upload = workdirUploadOf(job.launch);
      // Each attempt gets its own fresh copy of the uploaded folder (docs/spec.md "workdir").
      const workdir = upload ? await uploadedWorkdir(upload, spec.workdir, path.dirname(logPath), this.res.home) : spec.workdir;
      const mounts = fileMountsOf(job.launch, spec.fileMounts);
      const cwd = resolveWorkdir(workdir, path.dirname(logPath), runAs.account?.home);
      if (mounts) await placeFileMounts(mounts, cwd, path.dirname(logPath), this.res.home, undefined, { ownFolderOnly: runAs.account !== undefined });
      // In a container the placed file_mounts are bind-mounted where they were placed (docs/design.md §7 "Containers").
      const container = spec.image ? { image: spec.image, mounts: mounts ? Object.keys(mounts).map((t) => fileMountPath(t, cwd, setting('JOBDECK_FILE_MOUNT_ROOT'), path.dirname(logPath)).dest) : [] } : null;
      const group = launchGroupOf(job, this.res.home);
      const handle = await executor.launch({
        jobId: job.id,
        taskIndex: task.index,
        taskCount: job.taskCount,
        attempt: attempt.number,
        setup: spec.setup,
        run: spec.run,
        envs: spec.envs,
        workdir,
        cpus: spec.cpus,
        ...(gpus ? { gpus } : {}),
        ...(spec.memoryBytes !== undefined ? { memoryBytes: spec.memoryBytes } : {}),
        ...(spec.maxDurationMs !== undefined ? { maxDurationMs: spec.maxDurationMs } : {}),
        ...(spec.nodes > 1 ? { nodes: spec.nodes } : {}),
        ...(container ? { container } : {}),
        ...(group ? { group } : {}),
        attemptDir: path.dirname(logPath),
        logPath,
        ...runAs,
      });
      e.relaunch.delete(attempt.id);
      e.handles.set(attempt.id, handle);
      this.res.watches.ensure(job.id, attempt.id, executor, handle);
      this.res.watches.indexLogs(job.id, attempt.id, logPath, spec.nodes, true);
    } catch (err) {
      if (isTransientExecutorError(err)) return this.relaunchLater(job, task, attempt, e, err);
      // The executor could not start it: a lost attempt (recovery, not the user's restart) —
      // unless the task's own spec made it impossible, which no recovery would change.
      e.relaunch.delete(attempt.id);
      const precheck = isPrecheckError(err);
      const reason = `${precheck ? 'cannot launch' : 'launch failed'}: ${errMessage(err)}`;
      this.res.log.warn({ jobId: job.id, task: task.index, attempt: attempt.number, err: errMessage(err), precheck }, `job ${job.id}: ${reason}`);
      e.launchErrors.set(attempt.id, { reason, precheck });
    }
  }

  /** Logs (once a minute at most) why new attempts wait, and steps the job again later. */
  private waitForDisk(jobId: number, why: string): void {
    const t = Date.now();
    if (t - this.diskWarnedAt > 60_000) {
      this.diskWarnedAt = t;
      const home = dataFolder(this.res.home);
      this.res.log.warn({ jobId, home }, `new attempts wait: the data folder ${home}: ${why}`);
    }
    this.res.scheduler.later(jobId, Math.max(this.res.settings.reconcileMs, 1000));
  }

  private relaunchLater(job: Job, task: Task, attempt: Attempt, e: JobEntry, err: unknown): void {
    const tries = (e.relaunch.get(attempt.id)?.tries ?? 0) + 1;
    const delay = Math.min(this.res.settings.reconcileMs * 2 ** Math.min(tries - 1, 10), 60_000);
    e.relaunch.set(attempt.id, { tries, at: this.res.clock.now() + delay });
    this.res.counters.transientRetries++;
    this.res.log.warn({ jobId: job.id, task: task.index, attempt: attempt.number, err: errMessage(err), retryInMs: delay }, `job ${job.id}: executor unavailable; launching again in ${delay} ms`);
    this.res.scheduler.later(job.id, delay);
  }
}
