import type { Attempt, Job, Task } from '../generated/prisma/client';
import type { AttemptHandle, Executor } from '../executors/types';
import { handleFor } from './attempt-handle';
import { errMessage, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';

/**
 * Leftovers of ended attempts (docs/design.md §6, "Leftovers"): a reap is noted when an attempt
 * is seen ended and started right after the status write (executor.cancel() with the leftover
 * grace); every launch of the job awaits its reaps, and admission counts the job's CPUs until
 * they are done. A reap that fails is logged and never blocks a launch. Model: Ray's job
 * supervisor and Slurm end every process of a job when the job ends.
 */

/** One noted (or running) reap. */
interface Reap {
  jobId: number;
  attemptId: number;
  /** Starts the reap (no-op once started). Noted before the status write, started after it. */
  start(): void;
  started: boolean;
  /** Resolves when the reap finished (never rejects). */
  done: Promise<void>;
}

/** The reaps of ended attempts, by attempt id (see the module comment). */
export class ReapSystem {
  private readonly reaps = new Map<number, Reap>();

  /** `cpusFreed` runs after each reap (its job's CPUs are free for admission now). */
  constructor(
    private readonly res: MonitorResources,
    private readonly cpusFreed: () => void,
  ) {}

  /** Notes that `att` ended: what it left behind is stopped once start() runs for its job. */
  noteEnded(job: Job, task: Task, att: Attempt, e: JobEntry): void {
    if (this.reaps.has(att.id)) return;
    let handle: AttemptHandle | null;
    let executor: Executor;
    try {
      handle = handleFor(this.res, job, task, att, e);
      executor = this.res.executor(att.executor);
    } catch (err) {
      this.res.log.warn({ jobId: job.id, attemptId: att.id, err: errMessage(err) }, `job ${job.id}: cannot look for leftovers of attempt ${att.number}`);
      return;
    }
    if (!handle) return;
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const rec: Reap = {
      jobId: job.id,
      attemptId: att.id,
      started: false,
      start: () => {
        if (rec.started) return;
        rec.started = true;
        open();
      },
      done: Promise.resolve(),
    };
    const h = handle;
    rec.done = gate
      .then(() => this.stopLeftovers(job, task, att, executor, h))
      .finally(() => {
        if (this.reaps.get(att.id) === rec) this.reaps.delete(att.id);
        this.cpusFreed();
      });
    this.reaps.set(att.id, rec);
  }

  private async stopLeftovers(job: Job, task: Task, att: Attempt, executor: Executor, h: AttemptHandle): Promise<void> {
    const t0 = Date.now();
    try {
      await executor.cancel(h, { graceMs: this.res.settings.leftoverGraceMs });
    } catch (err) {
      this.res.log.error({ jobId: job.id, task: task.index, attempt: att.number, err: errMessage(err) }, `job ${job.id}: could not stop what attempt ${att.number} of task ${task.index} left running`);
      return;
    }
    this.res.log.debug({ jobId: job.id, task: task.index, attempt: att.number, ms: Date.now() - t0 }, `job ${job.id}: nothing of attempt ${att.number} of task ${task.index} is left`);
  }

  /** Starts the noted reaps of the job (in the background). */
  start(jobId: number): void {
    for (const r of this.reaps.values()) if (r.jobId === jobId) r.start();
  }

  /** Starts and awaits every reap of the job: called before any launch of the job. */
  async awaitJob(jobId: number): Promise<void> {
    const mine = [...this.reaps.values()].filter((r) => r.jobId === jobId);
    if (mine.length === 0) return;
    for (const r of mine) r.start();
    await Promise.all(mine.map((r) => r.done));
  }

  /** Jobs with a reap noted or running (their CPUs still count as used). */
  jobIds(): number[] {
    return [...new Set([...this.reaps.values()].map((r) => r.jobId))];
  }

  /** The reaps started and not finished. */
  running(): Promise<void>[] {
    return [...this.reaps.values()].filter((r) => r.started).map((r) => r.done);
  }

  /** Starts every reap and awaits them all (the monitor stops; running attempts keep running). */
  async finishAll(): Promise<void> {
    const reaps = [...this.reaps.values()];
    for (const r of reaps) r.start();
    await Promise.all(reaps.map((r) => r.done));
  }
}
