import type { Attempt } from '../generated/prisma/client';
import { isTerminal, type AttemptStatus, type TaskStatus } from '../jobs/status';
import { handleFor } from './attempt-handle';
import { now, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { AnyTransition } from './store-view';
import type { JobRow, Next, TaskRow } from './types';
import type { Writes } from './writes';

/**
 * Cancel (docs/design.md §6): a job in CANCELLING (or with cancelRequestedAt set) moves in
 * phases, each one guarded write: the job says CANCELLING; the active attempt and its task say
 * CANCELLING; executor.cancel() sends SIGTERM to the process group and SIGKILL after the grace;
 * once no process remains the attempt, the tasks and the job end CANCELLED in one write. A
 * PENDING job is cancelled at once. After a crash a CANCELLING job is simply cancelled again.
 */
export class CancelSystem {
  constructor(
    private readonly res: MonitorResources,
    private readonly writes: Writes,
  ) {}

  /**
   * One cancel phase of a job that is CANCELLING or has a cancel request. Every live task takes
   * part: one in a pipeline, several in a job group or task DAG (docs/design.md §17).
   */
  async advance(job: JobRow, e: JobEntry): Promise<Next> {
    if (job.status !== 'CANCELLING') {
      if (job.status === 'PENDING') return this.cancelPending(job);
      return this.follow(job, 'cancel requested');
    }
    const live = job.tasks.filter((t) => !isTerminal('task', t.status)).map((t) => ({ task: t, active: activeOf(t) }));
    const begin = live.filter(({ task, active }) => (active && active.status !== 'CANCELLING') || (task.status !== 'CANCELLING' && task.status !== 'PENDING'));
    if (begin.length > 0) return this.begin(job, begin, e);
    return this.finish(job, live, e);
  }

  /** The job goes CANCELLING (a cancel request, or a task or attempt already cancelling). */
  follow(job: JobRow, reason: string): Promise<Next> {
    return this.writes.writeMany(job, 'cancel-request', [this.writes.jobTo(job, 'CANCELLING', reason)]);
  }

  /** A PENDING job: its tasks and the job end CANCELLED at once. */
  private cancelPending(job: JobRow): Promise<Next> {
    const tr: AnyTransition[] = job.tasks
      .filter((t) => t.status === 'PENDING')
      .map((t) => ({ entity: 'task' as const, id: t.id, from: 'PENDING' as TaskStatus, to: 'CANCELLED' as TaskStatus, reason: 'job cancelled before it started' }));
    tr.push({ entity: 'job', id: job.id, from: 'PENDING', to: 'CANCELLED', reason: 'cancelled by request', data: { endedAt: now(this.res) } });
    return this.writes.writeMany(job, 'cancel-pending', tr);
  }

  /** Phase 1: each live task's active attempt (recording its handle) and the task say CANCELLING. */
  private begin(job: JobRow, live: Live[], e: JobEntry): Promise<Next> {
    const d = this.writes.decide(job);
    for (const { task: cur, active } of live) {
      if (active && active.status !== 'CANCELLING') {
        const h = handleFor(this.res, job, cur, active, e);
        d.add({
          entity: 'attempt',
          id: active.id,
          from: active.status as AttemptStatus,
          to: 'CANCELLING',
          reason: 'cancel requested',
          data: h && !active.executorRef ? { executorRef: h.ref, pid: h.pid ?? null, pidStartTime: h.pidStartTime ?? null, hostId: h.hostId ?? null } : {},
        });
      }
      if (cur.status !== 'CANCELLING' && cur.status !== 'PENDING') d.task(cur, 'CANCELLING', 'cancel requested');
    }
    return d.write('cancel-begin');
  }

  /** Phase 2: stop every active attempt's process group (SIGTERM, SIGKILL after the grace), then end everything. */
  private async finish(job: JobRow, live: Live[], e: JobEntry): Promise<Next> {
    const codes = new Map<number, number | null>();
    await Promise.all(live.map(async ({ task: cur, active }) => {
      if (!active) return;
      let exitCode: number | null = null;
      const h = handleFor(this.res, job, cur, active, e);
      if (h) {
        const executor = this.res.executor(active.executor);
        const graceMs = this.res.settings.cancelGraceMs;
        this.res.log.info({ jobId: job.id, task: cur.index, attempt: active.number, graceMs }, `job ${job.id}: stopping attempt ${active.number} of task ${cur.index}`);
        await executor.cancel(h, { graceMs });
        const p = await executor.probe(h);
        if (p.state === 'exited') exitCode = p.exitCode;
      }
      this.res.watches.unwatchAttempt(active.id);
      codes.set(cur.id, exitCode);
    }));
    const d = this.writes.decide(job);
    for (const { task: cur, active } of live) {
      if (active) d.add({ entity: 'attempt', id: active.id, from: 'CANCELLING', to: 'CANCELLED', reason: 'cancelled by request', data: { exitCode: codes.get(cur.id) ?? null, endedAt: now(this.res) } });
    }
    for (const t of job.tasks) {
      if (isTerminal('task', t.status)) continue;
      const pending = t.status === 'PENDING';
      d.task(t, 'CANCELLED', pending ? 'job cancelled' : 'cancelled by request', pending ? {} : { endedAt: now(this.res), ...(codes.has(t.id) ? { exitCode: codes.get(t.id) ?? null } : {}) });
    }
    d.add({ entity: 'job', id: job.id, from: 'CANCELLING', to: 'CANCELLED', reason: 'cancelled by request', data: { endedAt: now(this.res), ...this.writes.sums(job) } });
    return d.write('cancel-finish');
  }
}

/** A live task and its attempt while that is not terminal. */
interface Live {
  task: TaskRow;
  active: Attempt | undefined;
}

function activeOf(t: TaskRow): Attempt | undefined {
  const att = t.attempts[0];
  return att && !isTerminal('attempt', att.status) ? att : undefined;
}
