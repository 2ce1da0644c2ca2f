import type { Attempt } from '../generated/prisma/client';
import { isTerminal, type AttemptStatus, type JobStatus, type TaskStatus } from '../jobs/status';
import { handleFor } from './attempt-handle';
import { errMessage, now, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { AnyTransition } from './store-view';
import type { JobRow, TaskRow } from './types';
import type { Writes } from './writes';

/**
 * The exception path (docs/design.md §5 rule 7, exception path re-checks): after
 * `maxStepErrors` unexpected errors of a job's step in a row, the job ends FAILED_CONTROLLER —
 * but only after the same checks as a step: the row is re-read first (gone → stop, never
 * re-created; terminal → keep), the active attempt is stopped so nothing runs unwatched, and
 * the write is guarded like any other (a lost race re-reads and tries again).
 */
export class ExceptionPath {
  constructor(
    private readonly res: MonitorResources,
    private readonly writes: Writes,
  ) {}

  /**
   * Ends the job FAILED_CONTROLLER for `cause` (see the module comment).
   * @throws Error when it kept losing races for 5 rounds; database errors as the store raises them.
   */
  async run(id: number, e: JobEntry, cause: unknown): Promise<void> {
    const reason = `monitor error: ${errMessage(cause)}`;
    for (let round = 0; round < 5; round++) {
      const job = await this.res.store.readJob(id);
      if (!job) {
        this.res.log.info({ jobId: id }, `job ${id}: exception path: row gone; nothing written`);
        this.res.scheduler.forget(id);
        return;
      }
      if (this.res.store.owner !== null && job.ownerId !== this.res.store.owner) {
        this.res.log.info({ jobId: id, ownerId: job.ownerId }, `job ${id}: exception path: owned by ${job.ownerId ?? 'no server'}; nothing written`);
        this.res.scheduler.forget(id);
        return;
      }
      if (isTerminal('job', job.status)) {
        this.res.log.info({ jobId: id, status: job.status }, `job ${id}: exception path: already ${job.status}; kept`);
        this.res.scheduler.forget(id);
        return;
      }
      await this.res.hooks.beforeWrite?.({ jobId: id, phase: 'exception', job });
      // Every live task's attempt is stopped: one in a pipeline, several in a group or DAG (§17).
      const live = job.tasks.filter((t) => !isTerminal('task', t.status));
      const cur = live[0];
      const actives = live.flatMap((t) => (t.attempts[0] && !isTerminal('attempt', t.attempts[0].status) ? [{ task: t, att: t.attempts[0] }] : []));
      const stopped = new Map(await Promise.all(actives.map(async (a) => [a.att.id, await this.stopActive(job, a.task, a.att, e)] as const)));
      const res = await this.res.store.transitionMany(this.failWrites(job, cur, actives, stopped, reason), job);
      if (res.outcome === 'applied') {
        this.res.counters.controllerFailures++;
        this.res.log.error({ jobId: id, err: cause }, `job ${id}: FAILED_CONTROLLER (${reason})`);
        this.res.scheduler.forget(id);
        return;
      }
      this.writes.outcome(job, 'exception', res);
      // gone / terminal: the next read stops; moved: try again with the fresh row.
    }
    throw new Error(`job ${id}: exception path kept losing races`);
  }

  /** Nothing may run unwatched: stops the attempt before the job is given up. True when stopped. */
  private async stopActive(job: JobRow, cur: TaskRow, active: Attempt, e: JobEntry): Promise<boolean> {
    let stopped = false;
    const h = handleFor(this.res, job, cur, active, e);
    if (h) {
      try {
        await this.res.executor(active.executor).cancel(h, { graceMs: this.res.settings.cancelGraceMs });
        stopped = true;
      } catch (err) {
        this.res.log.error({ jobId: job.id, err }, `job ${job.id}: exception path could not stop attempt ${active.number}`);
      }
    }
    this.res.watches.unwatchAttempt(active.id);
    return stopped;
  }

  /**
   * The attempts (CANCELLED if stopped, else LOST), the first live task FAILED_CONTROLLER, the
   * other live tasks CANCELLED, the job FAILED_CONTROLLER.
   */
  private failWrites(job: JobRow, cur: TaskRow | undefined, actives: Array<{ task: TaskRow; att: Attempt }>, stopped: Map<number, boolean>, reason: string): AnyTransition[] {
    const tr: AnyTransition[] = [];
    for (const { att } of actives) tr.push({ entity: 'attempt', id: att.id, from: att.status as AttemptStatus, to: stopped.get(att.id) ? 'CANCELLED' : 'LOST', reason, data: { endedAt: now(this.res) } });
    if (cur) tr.push({ entity: 'task', id: cur.id, from: cur.status as TaskStatus, to: 'FAILED_CONTROLLER', reason, data: { endedAt: now(this.res) } });
    for (const t of job.tasks) {
      if (t === cur || isTerminal('task', t.status)) continue;
      const pending = t.status === 'PENDING';
      tr.push({ entity: 'task', id: t.id, from: t.status as TaskStatus, to: 'CANCELLED', reason: 'the job failed in the controller', ...(pending ? {} : { data: { endedAt: now(this.res) } }) });
    }
    tr.push({ entity: 'job', id: job.id, from: job.status as JobStatus, to: 'FAILED_CONTROLLER', reason, data: { endedAt: now(this.res), ...this.writes.sums(job) } });
    return tr;
  }
}
