/**
 * Set writes over many jobs at once (a batch cancel): the guarded set write and the durable
 * cancel request. The statements of one job's cancel by the monitor are guarded writes
 * (transition.ts).
 */
import type { JobEvent, Prisma } from '../generated/prisma/client';
import { logger } from '../log';
import { assertTransition, JOB_TERMINAL, type JobStatus, type TaskStatus } from '../jobs/status';
import { outboxInsert, webhookEventOf } from './outbox';
import { anySubscription } from './webhook-subscriptions';
import { pgTimestamp } from './sql';
import type { Store } from './handle';

/** A set write over many jobs: see transitionJobsWhere(). */
export interface JobsWhere {
  ids: number[];
  from: JobStatus;
  to: JobStatus;
  reason?: string | null;
  data?: Omit<Prisma.JobUncheckedUpdateManyInput, 'status' | 'id'>;
  /** Also move these jobs' tasks that are in `tasks.from` (same transaction). */
  tasks?: { from: TaskStatus; to: TaskStatus; reason?: string | null; data?: Omit<Prisma.TaskUncheckedUpdateManyInput, 'status' | 'id'> };
}

/** Jobs one set write's statement covers (its `id IN (…)` list). */
const CHUNK = 1000;

/**
 * Guarded set write over many jobs at once (batch cancel): every job of `ids` whose status is
 * `from` moves to `to` — one `UPDATE … WHERE id IN (…) AND status = from RETURNING id` per chunk
 * of 1000, the guard in the WHERE clause — and, with `tasks`, those jobs' tasks in `tasks.from`
 * move to `tasks.to` in the same transaction. One JobEvent per row written (per job: its tasks'
 * events, then the job's) and the webhook deliveries they cause (outbox.ts), announced on the
 * store's bus after each commit. Jobs not in `from`
 * (moved, terminal, gone) are simply not in `applied`: the caller re-reads them.
 * @throws IllegalTransitionError before any query when a transition is not allowed.
 */
export async function transitionJobsWhere(store: Store, b: JobsWhere): Promise<{ applied: number[]; events: JobEvent[] }> {
  assertTransition('job', b.from, b.to);
  if (b.tasks) assertTransition('task', b.tasks.from, b.tasks.to);
  const applied: number[] = [];
  const events: JobEvent[] = [];
  const ids = [...new Set(b.ids)];
  // A notification only while a subscription exists (read before the transaction: outbox.ts).
  const kind = webhookEventOf({ entity: 'job', from: b.from, to: b.to });
  const notice = kind && ids.length && (await anySubscription(store)) ? kind : null;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const res = await store.prisma.$transaction(async (tx) => {
      const jobs = await tx.job.updateManyAndReturn({
        where: { id: { in: chunk }, status: b.from },
        data: { ...(b.data ?? {}), status: b.to, ...(b.reason !== undefined ? { statusReason: b.reason } : {}), updatedAt: new Date() },
        select: { id: true },
      });
      const jobIds = jobs.map((j) => j.id).sort((x, y) => x - y);
      if (jobIds.length === 0) return { jobIds, events: [] as JobEvent[], outbox: 0 };
      const byJob = new Map<number, Prisma.JobEventCreateManyInput[]>(jobIds.map((id) => [id, []]));
      if (b.tasks) {
        const t = b.tasks;
        const rows = await tx.task.updateManyAndReturn({
          where: { jobId: { in: jobIds }, status: t.from },
          data: { ...(t.data ?? {}), status: t.to, ...(t.reason !== undefined ? { statusReason: t.reason } : {}) },
          select: { jobId: true, index: true },
        });
        rows.sort((x, y) => x.jobId - y.jobId || x.index - y.index);
        for (const r of rows) byJob.get(r.jobId)!.push({ jobId: r.jobId, entity: 'task', taskIndex: r.index, from: t.from, to: t.to, reason: t.reason ?? null });
      }
      const data: Prisma.JobEventCreateManyInput[] = [];
      for (const id of jobIds) data.push(...byJob.get(id)!, { jobId: id, entity: 'job', from: b.from, to: b.to, reason: b.reason ?? null });
      const evs = await tx.jobEvent.createManyAndReturn({ data });
      // The webhook outbox in the same transaction as the events that cause it (outbox.ts).
      const ids = evs.filter((e) => e.entity === 'job').map((e) => e.id);
      const events = `(SELECT x.*, $3::text AS t FROM "JobEvent" x WHERE x."id" = ANY ($1::int[]))`;
      const outbox = notice ? await tx.$executeRawUnsafe(outboxInsert(events, null, '$2::timestamp(3)'), ids, pgTimestamp(new Date()), notice) : 0;
      return { jobIds, events: evs.sort((x, y) => x.id - y.id), outbox };
    });
    applied.push(...res.jobIds);
    events.push(...res.events);
    if (res.jobIds.length) {
      logger().info({ jobs: res.jobIds.length, from: b.from, to: b.to, reason: b.reason ?? undefined }, `${res.jobIds.length} jobs: ${b.from} → ${b.to}${b.reason ? ` (${b.reason})` : ''}`);
    }
    for (const e of res.events) store.bus.emit({ type: 'event', jobId: e.jobId, event: e });
    if (res.outbox > 0) store.bus.emit({ type: 'outbox', jobId: 0 });
  }
  return { applied, events };
}

/**
 * Records a cancel request without a status write: sets cancelRequestedAt (now) on the jobs of
 * `ids` that are not terminal and have none yet. The monitor honours it on the job's next step,
 * also after a restart. No JobEvent (no status changed); announced on the bus as
 * `cancel-requested`, one per job written, after the commit.
 * @returns how many rows were written.
 */
export async function recordCancelRequest(store: Store, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await store.prisma.job.updateManyAndReturn({
    where: { id: { in: ids }, cancelRequestedAt: null, status: { notIn: [...JOB_TERMINAL] } },
    data: { cancelRequestedAt: new Date() },
    select: { id: true },
  });
  // No status changed, so no JobEvent — but the monitor must hear it: a RUNNING job whose exit
  // it is subscribed to is otherwise stepped only by the reconcile pass's occasional full sweep.
  for (const r of rows) store.bus.emit({ type: 'cancel-requested', jobId: r.id });
  return rows.length;
}
