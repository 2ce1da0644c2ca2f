import type { Job, Task } from '../generated/prisma/client';
import type { ProbeResult } from '../executors/types';
import { deriveJobStatus, isTerminal, type JobStatus, type TaskStatus, type TaskStatusView } from '../jobs/status';
import { graphPartOf, graphState } from '../jobs/task-graph';
import type { ReapSystem } from './reap';
import { now, type MonitorResources } from './resources';
import type { AnyTransition, BatchOutcome, Transition, TransitionOutcome } from './store-view';
import { SQL_NULL } from '../store';
import type { JobRow, Next, StepPhase, WriteContext } from './types';

/**
 * How a decision becomes writes (docs/design.md §4 and §5): the task statuses it sets, the job
 * status deriveJobStatus() gives for them (with the restart / recovery sums), the later tasks
 * that never start, all in ONE guarded write with the beforeWrite hook first. A write that
 * lost is logged and the step re-reads (rule 4, moved → continue); a write that made the job
 * terminal ends the step (rule 3, terminal → keep). Leftovers of an attempt the write ended are
 * started right after it.
 */

/** restartCount / exitCodeRestartCount / recoveryCount of a job, as the sums over its tasks. */
export interface JobSums {
  restartCount: number;
  exitCodeRestartCount: number;
  recoveryCount: number;
}

/** Options of Decision.deriveJob(). */
export interface DeriveOptions {
  /** Other fields of the job's write (e.g. currentTask). */
  data?: Transition<'job'>['data'];
  /** Tasks' restarts after this decision, by task id (the sums use them). */
  restarts?: Map<number, number>;
  /** Tasks' recoveries after this decision, by task id. */
  recoveries?: Map<number, number>;
  /** Tasks' restarts on a recover_on_exit_codes code after this decision, by task id. */
  exitCodeRestarts?: Map<number, number>;
}

/** The writes of the monitor's decisions (see the module comment). */
export class Writes {
  constructor(
    private readonly res: MonitorResources,
    private readonly reap: ReapSystem,
  ) {}

  /** A new decision about `job`, its writes added in the order they are applied. */
  decide(job: JobRow): Decision {
    return new Decision(this, job);
  }

  /** The restart and recovery counts as the sums over the job's tasks (with overrides by task id). */
  sums(job: JobRow, restarts?: Map<number, number>, recoveries?: Map<number, number>, exitCodeRestarts?: Map<number, number>): JobSums {
    let restartCount = 0;
    let exitCodeRestartCount = 0;
    let recoveryCount = 0;
    for (const t of job.tasks) {
      restartCount += restarts?.get(t.id) ?? t.restarts;
      exitCodeRestartCount += exitCodeRestarts?.get(t.id) ?? t.exitCodeRestarts;
      recoveryCount += recoveries?.get(t.id) ?? t.recoveries;
    }
    return { restartCount, exitCodeRestartCount, recoveryCount };
  }

  /**
   * The job's write for the task statuses `after` this decision (task id → status; the others
   * as read): the status deriveJobStatus() gives (null when unchanged), with startedAt /
   * endedAt and the sums.
   */
  jobTransition(job: JobRow, after: Map<number, TaskStatus>, reason: string | null, o: DeriveOptions = {}): Transition<'job'> | null {
    const views = taskViews(job, after);
    const to = deriveJobStatus(views, { cancelRequested: job.cancelRequestedAt !== null || job.status === 'CANCELLING' });
    if (to === job.status) return null;
    const d: Transition<'job'>['data'] = { ...(o.data ?? {}), ...this.sums(job, o.restarts, o.recoveries, o.exitCodeRestarts) };
    if (job.status === 'PENDING' && !job.startedAt) d.startedAt = now(this.res);
    // Why it waited (admission's, or its executor's scheduler's) and its place in line are over with the status they were for.
    if (job.pendingReason !== null) d.pendingReason = null;
    if (job.pendingPlace !== null) d.pendingPlace = SQL_NULL;
    // A restart's or recovery's wait ends with the status (a recovery sets its own: o.data).
    if (job.nextAttemptAt !== null && !('nextAttemptAt' in d)) d.nextAttemptAt = null;
    if (isTerminal('job', to)) d.endedAt = now(this.res);
    return { entity: 'job', id: job.id, from: job.status as JobStatus, to, reason, data: d };
  }

  /** The job's write to `to`, whatever its tasks say (a cancel request), with the sums. */
  jobTo(job: JobRow, to: JobStatus, reason: string): Transition<'job'> {
    const clear = { ...(job.pendingReason !== null ? { pendingReason: null } : {}), ...(job.pendingPlace !== null ? { pendingPlace: SQL_NULL } : {}), ...(job.nextAttemptAt !== null ? { nextAttemptAt: null } : {}) };
    return { entity: 'job', id: job.id, from: job.status as JobStatus, to, reason, data: { ...this.sums(job), ...clear } };
  }

  /**
   * Writes every PENDING task → CANCELLED (never started: a task failed, so nothing more starts;
   * in a pipeline these are the tasks after `index`), noting each in `after`.
   */
  cancelLater(job: JobRow, index: number, after: Map<number, TaskStatus>, reason: string): AnyTransition[] {
    const tr: AnyTransition[] = [];
    for (const t of job.tasks) {
      if (t.index !== index && t.status === 'PENDING' && !after.has(t.id)) {
        after.set(t.id, 'CANCELLED');
        tr.push({ entity: 'task', id: t.id, from: 'PENDING', to: 'CANCELLED', reason });
      }
    }
    return tr;
  }

  /** Calls the beforeWrite hook, then the write. */
  async guarded<R>(ctx: WriteContext, write: () => Promise<R>): Promise<R> {
    await this.res.hooks.beforeWrite?.(ctx);
    return write();
  }

  /** Logs a lost write; the caller re-reads (rule 4: continue with the fresh row). Always 'again'. */
  outcome(job: Job, phase: StepPhase, res: BatchOutcome | TransitionOutcome<unknown>): Next {
    if (res.outcome !== 'applied' && res.reason === 'gone' && res.fenced) {
      // Another server holds the job's lease now: drop it here (the next read sees the owner and stops).
      this.res.log.warn({ jobId: job.id, phase, lease: 'lost' }, `job ${job.id}: ${phase} write fenced: lease lost (another server took the job over); dropping it`);
      return 'again';
    }
    if (res.outcome !== 'applied') {
      const what = res.reason === 'gone' ? 'row gone' : `${res.reason} (now ${(res as { row: { status: string } }).row.status})`;
      this.res.log.info({ jobId: job.id, phase, reason: res.reason }, `job ${job.id}: ${phase} write lost: ${what}; re-reading`);
    }
    return 'again';
  }

  /**
   * One guarded transaction; the hook runs first, the job's reaps start after it. 'idle' when
   * there is nothing to write or the write made the job terminal, else 'again' (the next read
   * decides). `onApplied` runs only when the write applied.
   */
  async writeMany(job: JobRow, phase: StepPhase, tr: AnyTransition[], observed?: ProbeResult, onApplied?: () => void): Promise<Next> {
    if (tr.length === 0) return 'idle';
    let res: BatchOutcome;
    try {
      res = await this.guarded({ jobId: job.id, phase, job, observed }, () => this.res.store.transitionMany(tr, job));
    } finally {
      // The status write first, then the leftovers of an attempt it ended (not awaited).
      this.reap.start(job.id);
    }
    if (res.outcome === 'applied') {
      onApplied?.();
      // Rule 3 without a re-read: nothing ever changes a terminal job row, so the step ends
      // here, leaving the database free for the stream that announces the end.
      if (tr.some((t) => t.entity === 'job' && isTerminal('job', t.to))) {
        this.res.scheduler.forget(job.id);
        return 'idle';
      }
    }
    return this.outcome(job, phase, res);
  }

  /**
   * No task is live any more (lib/jobs/task-graph.ts): the tasks that can never start CANCELLED,
   * the job as derived. In a pipeline: the current task ended, later tasks CANCELLED.
   */
  finish(job: JobRow, phase: StepPhase): Promise<Next> {
    const g = graphState(taskViews(job));
    const cur = job.tasks.find((t) => t.status !== 'SUCCEEDED' && !g.blocked.includes(t.index));
    const d = this.decide(job);
    const why = g.decided ?? (cur ? `task ${cur.index} ended ${cur.status}` : 'all tasks succeeded');
    for (const t of job.tasks) if (g.blocked.includes(t.index)) d.task(t, 'CANCELLED', why);
    d.deriveJob(why);
    if (d.empty) throw new Error(`job ${job.id} is ${job.status} but its tasks say ${deriveJobStatus(taskViews(job))}`);
    return d.write(phase);
  }
}

/** A job's tasks as the status rule and the task graph see them (statuses overridden by `after`). */
export function taskViews(job: JobRow, after?: Map<number, TaskStatus>): TaskStatusView[] {
  return job.tasks.map((t) => ({ index: t.index, status: after?.get(t.id) ?? (t.status as TaskStatus), ...graphPartOf(t.spec) }));
}

/**
 * One decision about a job: its attempt, task and job writes in the order they are applied
 * (the order of their JobEvents). Task statuses set here feed deriveJob().
 */
export class Decision {
  private readonly tr: AnyTransition[] = [];
  private readonly after = new Map<number, TaskStatus>();

  constructor(
    private readonly w: Writes,
    private readonly job: JobRow,
  ) {}

  /** True while no write was added. */
  get empty(): boolean {
    return this.tr.length === 0;
  }

  /** Adds writes as they are (an attempt's, or an explicit job write). */
  add(...tr: AnyTransition[]): this {
    this.tr.push(...tr);
    return this;
  }

  /** Moves task `t` from its status as read to `to` (no reason / data given: left as they are). */
  task(t: Task, to: TaskStatus, reason?: string | null, data?: Transition<'task'>['data']): this {
    this.after.set(t.id, to);
    const w: Transition<'task'> = { entity: 'task', id: t.id, from: t.status as TaskStatus, to };
    if (reason !== undefined) w.reason = reason;
    if (data !== undefined) w.data = data;
    this.tr.push(w);
    return this;
  }

  /** Every PENDING task after `index` → CANCELLED. */
  cancelLater(index: number, reason: string): this {
    this.tr.push(...this.w.cancelLater(this.job, index, this.after, reason));
    return this;
  }

  /** Adds the job's write for the task statuses set so far, when its derived status changes. */
  deriveJob(reason: string | null, o?: DeriveOptions): this {
    const jt = this.w.jobTransition(this.job, this.after, reason, o);
    if (jt) this.tr.push(jt);
    return this;
  }

  /** Writes it all (Writes.writeMany). */
  write(phase: StepPhase, observed?: ProbeResult, onApplied?: () => void): Promise<Next> {
    return this.w.writeMany(this.job, phase, this.tr, observed, onApplied);
  }
}
