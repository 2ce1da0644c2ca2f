import type { Attempt } from '../generated/prisma/client';
import { isTerminal, type AttemptStatus, type TaskStatus } from '../jobs/status';
import { handleFor } from './handles';
import { now, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { AnyTransition } from './store';
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

  /** One cancel phase of a job that is CANCELLING or has a cancel request. */
  async advance(job: JobRow, e: JobEntry): Promise<Next> {
    if (job.status !== 'CANCELLING') {
      if (job.status === 'PENDING') return this.cancelPending(job);
      return this.follow(job, 'cancel requested');
    }
    const cur = job.tasks.find((t) => !isTerminal('task', t.status));
    const att = cur?.attempts[0];
    const active = att && !isTerminal('attempt', att.status) ? att : undefined;
    if (cur && ((active && active.status !== 'CANCELLING') || (cur.status !== 'CANCELLING' && cur.status !== 'PENDING'))) {
      return this.begin(job, cur, active, e);
    }
    return this.finish(job, cur, active, e);
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

  /** Phase 1: the active attempt (recording its handle) and its task say CANCELLING. */
  private begin(job: JobRow, cur: TaskRow, active: Attempt | undefined, e: JobEntry): Promise<Next> {
    const d = this.writes.decide(job);
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
    return d.write('cancel-begin');
  }

  /** Phase 2: stop the process group (SIGTERM, SIGKILL after the grace), then end everything. */
  private async finish(job: JobRow, cur: TaskRow | undefined, active: Attempt | undefined, e: JobEntry): Promise<Next> {
    let exitCode: number | null = null;
    if (cur && active) {
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
    }
    const d = this.writes.decide(job);
    if (active) d.add({ entity: 'attempt', id: active.id, from: 'CANCELLING', to: 'CANCELLED', reason: 'cancelled by request', data: { exitCode, endedAt: now(this.res) } });
    for (const t of job.tasks) {
      if (isTerminal('task', t.status)) continue;
      const pending = t.status === 'PENDING';
      d.task(t, 'CANCELLED', pending ? 'job cancelled' : 'cancelled by request', pending ? {} : { endedAt: now(this.res), ...(active && t.id === cur?.id ? { exitCode } : {}) });
    }
    d.add({ entity: 'job', id: job.id, from: 'CANCELLING', to: 'CANCELLED', reason: 'cancelled by request', data: { endedAt: now(this.res), ...this.writes.sums(job) } });
    return d.write('cancel-finish');
  }
}
