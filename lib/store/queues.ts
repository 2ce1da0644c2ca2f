/**
 * The operator queues (the Queue table; docs/design.md §6 "Admission"): read, put, delete, and
 * what each holds now. The default queue is no row. A change is announced as `queues` on the bus
 * (jobId 0) so the monitor runs an admission pass with the new limits.
 */
import { Prisma, type Queue } from '../generated/prisma/client';
import { ACTIVE_JOB_STATUSES, type QueueLimits } from '../jobs/capacity';
import { JOB_TERMINAL } from '../jobs/status';
import type { Store, StoreScope } from './handle';

/** A queue's settings as an operator writes them (null = no limit / no default). */
export interface QueueSettings {
  maxRunning: number | null;
  maxCpus: number | null;
  /** Absent: no limit (as null). */
  maxGpus?: number | null;
  /** ms; null or absent: the server's start timeout. */
  startTimeoutMs?: number | null;
  defaultPriority: number | null;
  /** Highest priority a member may give the queue's jobs (lib/jobs/priority-cap.ts); null: the role's cap only. */
  memberMaxPriority: number | null;
}

/** Every queue row, by name. */
export function listQueueRows(store: StoreScope): Promise<Queue[]> {
  return store.prisma.queue.findMany({ orderBy: { name: 'asc' } });
}

/** The operator queues' limits by name (admission's read; the default queue has none). */
export async function queueLimits(store: StoreScope): Promise<Record<string, QueueLimits>> {
  const rows = await store.prisma.queue.findMany({ select: { name: true, maxRunning: true, maxCpus: true, maxGpus: true, startTimeoutMs: true } });
  return Object.fromEntries(rows.map((r) => [r.name, { maxRunning: r.maxRunning, maxCpus: r.maxCpus, maxGpus: r.maxGpus, startTimeoutMs: r.startTimeoutMs }]));
}

/** How long a submit may use the queues it read before (ms): another server's change shows within it. */
export const QUEUE_CACHE_MS = 1000;

/**
 * The queue rows for a submit: the store's copy when younger than QUEUE_CACHE_MS, else read
 * again. A change through this store (putQueue, deleteQueue) drops the copy at once; one made
 * by another server sharing the database is seen within QUEUE_CACHE_MS. Saves a query per
 * submit (about 0.85 ms of CPU on PGlite).
 */
export async function cachedQueueRows(store: Store, nowMs = Date.now()): Promise<Queue[]> {
  const c = store.queueCache;
  if (c && nowMs >= c.atMs && nowMs - c.atMs < QUEUE_CACHE_MS) return c.rows;
  const rows = await listQueueRows(store);
  store.queueCache = { rows, atMs: nowMs };
  return rows;
}

/** One queue row, or null. */
export function queueRow(store: StoreScope, name: string): Promise<Queue | null> {
  return store.prisma.queue.findUnique({ where: { name } });
}

/** Per queue name: its jobs waiting (PENDING, no cancel request), active, and the CPUs and GPUs the active ones hold. */
export async function queueUse(store: StoreScope): Promise<Map<string, { pending: number; running: number; cpus: number; gpus: number }>> {
  const groups = await store.prisma.job.groupBy({
    by: ['queue', 'status'],
    where: { OR: [{ status: { in: [...ACTIVE_JOB_STATUSES] } }, { status: 'PENDING', cancelRequestedAt: null }] },
    _count: { _all: true },
    _sum: { cpus: true, gpus: true },
  });
  const out = new Map<string, { pending: number; running: number; cpus: number; gpus: number }>();
  for (const g of groups) {
    const u = out.get(g.queue) ?? { pending: 0, running: 0, cpus: 0, gpus: 0 };
    if (g.status === 'PENDING') u.pending += g._count._all;
    else {
      u.running += g._count._all;
      u.cpus += g._sum.cpus ?? 0;
      u.gpus += g._sum.gpus ?? 0;
    }
    out.set(g.queue, u);
  }
  return out;
}

/** Creates or replaces queue `name` (validated by the caller; `userId`: who created it, kept on a replace), then announces `queues`. */
export async function putQueue(store: Store, name: string, s: QueueSettings, userId: number | null = null): Promise<Queue> {
  const row = await store.prisma.queue.upsert({ where: { name }, create: { name, ...s, userId }, update: { ...s } });
  store.queueCache = null;
  store.bus.emit({ type: 'queues', jobId: 0 });
  return row;
}

/** What deleteQueue() did. */
export type QueueDelete = { deleted: true } | { deleted: false; unfinished: number } | { deleted: false; missing: true };

/**
 * Deletes queue `name` unless a job that has not finished names it (its limits would silently
 * vanish under it); then announces `queues`. One transaction: the queue's row is locked first
 * (FOR UPDATE), which waits for a submit writing a job into the queue (its statement holds the
 * row FOR KEY SHARE) to commit; the next statement, with a fresh snapshot, then sees that job and
 * deletes only if no unfinished job names the queue. A submit that comes after the lock waits for
 * the delete and writes nothing (lib/store/submit-queue.ts QueueGoneError).
 */
export async function deleteQueue(store: Store, name: string): Promise<QueueDelete> {
  const terminal = [...JOB_TERMINAL];
  const n = await store.prisma.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<unknown[]>`SELECT 1 FROM "Queue" WHERE "name" = ${name} FOR UPDATE`;
    if (locked.length === 0) return 0;
    return tx.$executeRaw`
      DELETE FROM "Queue" WHERE "name" = ${name}
        AND NOT EXISTS (SELECT 1 FROM "Job" WHERE "queue" = ${name} AND "status"::text NOT IN (${Prisma.join(terminal)}))`;
  });
  if (n === 1) {
    store.queueCache = null;
    store.bus.emit({ type: 'queues', jobId: 0 });
    return { deleted: true };
  }
  if (!(await queueRow(store, name))) return { deleted: false, missing: true };
  const unfinished = await store.prisma.job.count({ where: { queue: name, status: { notIn: terminal } } });
  return { deleted: false, unfinished };
}
