/**
 * The admission pass's reads of an executor's line (docs/design.md §6 "Admission"): the PENDING
 * jobs without a cancel request, in line order (priority desc, id asc — lib/jobs/capacity.ts
 * lineOrder) as the index Job(status, executor, priority desc, id) reads it: all of them, a page
 * after a place, or those matching what a blocked plan looks for.
 */
import type { Prisma } from '../generated/prisma/client';
import type { WaitingJob } from '../jobs/capacity';
import { readGpuOptions } from '../jobs/gpus';
import type { StoreScope } from './handle';

/** A waiting job as admission reads it: what the plan takes, its GPUs, and the reason and place stored now. */
export type WaitingRow = WaitingJob & { gpus: number; pendingReason: string | null; pendingPlace: unknown };

/** A place in an executor's line: the last job read. */
export interface LinePlace {
  id: number;
  priority: number;
}

/** Which part of an executor's line waitingPage() reads. */
export interface LinePage {
  /** After this job (null: from the front). */
  after: LinePlace | null;
  take: number;
  /** Not the jobs of these queues. */
  skipQueues?: readonly string[];
  /** Only the jobs of this queue. */
  queue?: string;
}

/** What a blocked plan looks for (waitingMatching): bigger than, or submitted at or before (ms). */
export interface LineMatch {
  cpusAbove: number | null;
  nodesAbove?: number | null;
  submittedAtOrBefore: number | null;
}

const WAITING_SELECT = { id: true, cpus: true, nodes: true, gpus: true, gpuRequest: true, executor: true, submittedAt: true, readyAt: true, priority: true, queue: true, pendingReason: true, pendingPlace: true, userId: true } as const;

const LINE_ORDER = [{ priority: 'desc' }, { id: 'asc' }] satisfies Prisma.JobOrderByWithRelationInput[];

// A dependent joins the line when its dependencies are met (readyAt): its start timeout counts from there.
function toWaiting(r: { id: number; cpus: number; nodes: number; gpus: number; gpuRequest: unknown; executor: string; submittedAt: Date; readyAt: Date | null; priority: number; queue: string; pendingReason: string | null; pendingPlace: unknown; userId: number | null }): WaitingRow {
  const options = readGpuOptions(r.gpuRequest);
  return {
    id: r.id,
    cpus: r.cpus,
    ...(r.nodes > 1 ? { nodes: r.nodes } : {}),
    gpus: r.gpus,
    ...(options.length ? { gpuOptions: options } : {}),
    executor: r.executor,
    submittedAtMs: (r.readyAt ?? r.submittedAt).getTime(),
    priority: r.priority,
    queue: r.queue,
    pendingReason: r.pendingReason,
    pendingPlace: r.pendingPlace,
    ...(r.userId !== null ? { userId: r.userId } : {}),
  };
}

// A job still waiting for other jobs (depends_on) is not in the line: it neither starts nor blocks it.
function waitingWhere(executor: string) {
  return { status: 'PENDING' as const, cancelRequestedAt: null, depsWaiting: false, executor };
}

/** Every waiting job of the executor, in line order. */
export async function waitingAll(store: StoreScope, executor: string): Promise<WaitingRow[]> {
  return (await store.prisma.job.findMany({ where: waitingWhere(executor), select: WAITING_SELECT, orderBy: LINE_ORDER })).map(toWaiting);
}

/** Up to `take` waiting jobs of the executor in line order; see LinePage. */
export async function waitingPage(store: StoreScope, executor: string, { after, take, skipQueues = [], queue }: LinePage): Promise<WaitingRow[]> {
  // `priority <= p` bounds the index range; the OR keeps FIFO order within p.
  const where: Prisma.JobWhereInput = {
    ...waitingWhere(executor),
    ...(after ? { priority: { lte: after.priority }, OR: [{ priority: { lt: after.priority } }, { id: { gt: after.id } }] } : {}),
    ...(queue !== undefined ? { queue } : skipQueues.length ? { queue: { notIn: [...skipQueues] } } : {}),
  };
  return (await store.prisma.job.findMany({ where, select: WAITING_SELECT, orderBy: LINE_ORDER, take })).map(toWaiting);
}

/**
 * Waiting jobs of the executor with more CPUs than `cpusAbove` (more nodes than `nodesAbove`) or
 * submitted at or before `submittedAtOrBefore` (ms), in line order; none when nothing is asked.
 */
export async function waitingMatching(store: StoreScope, executor: string, m: LineMatch): Promise<WaitingRow[]> {
  const also: Prisma.JobWhereInput[] = [];
  if (m.cpusAbove !== null) also.push({ cpus: { gt: m.cpusAbove } });
  if (m.nodesAbove != null) also.push({ nodes: { gt: m.nodesAbove } });
  if (m.submittedAtOrBefore !== null) {
    const at = new Date(m.submittedAtOrBefore);
    also.push({ OR: [{ readyAt: null, submittedAt: { lte: at } }, { readyAt: { lte: at } }] });
  }
  if (also.length === 0) return [];
  const where = { ...waitingWhere(executor), OR: also };
  return (await store.prisma.job.findMany({ where, select: WAITING_SELECT, orderBy: LINE_ORDER })).map(toWaiting);
}
