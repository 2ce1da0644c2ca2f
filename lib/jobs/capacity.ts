/**
 * Admission: which PENDING jobs may start now, and why the others wait. Pure; the monitor reads
 * the inputs and applies the plan with guarded writes (docs/design.md §6, "Admission").
 *
 * Per executor, jobs form ONE line in (priority desc, id asc) order — higher priority first,
 * FIFO within a priority — and start while their `Job.cpus` fit the CPU budget left by the
 * ACTIVE_JOB_STATUSES jobs. Strict priority: the first job of the line that does not fit blocks
 * everything behind it (no backfill: a big job is never starved, and the order is predictable).
 * A job whose queue is at its limit (running jobs or CPUs; the `default` queue has none) waits
 * without blocking the line; behind a job of its own queue that the queue's CPU limit holds, the
 * rest of that queue waits too. A job bigger than the whole budget, or waiting `startTimeoutMs`
 * (JOBDECK_START_TIMEOUT_MS, 1 h), ends FAILED_NO_RESOURCE without blocking the line — as does a
 * job asking for more nodes at once (`num_nodes`) than the executor has; `enabled: false`
 * (JOBDECK_CAPACITY_CHECK=0) admits every job. A multi-node job's `Job.cpus` is already nodes ×
 * CPUs per node. Every job read that still waits gets a reason (Job.pendingReason).
 */

import { quotaOrigin } from './quotas';
import { DEFAULT_QUEUE } from './spec/schema';
import { REASON_NOTE } from './waiting';

/** Job statuses that hold their CPUs. */
export const ACTIVE_JOB_STATUSES = ['STARTING', 'RUNNING', 'RECOVERING', 'CANCELLING'] as const;

export { DEFAULT_QUEUE } from './spec/schema';

/** A job's priority when none is known (lib/jobs/spec PRIORITY.default). */
const DEFAULT_PRIORITY = 500;

/** A job waiting for admission. */
export interface WaitingJob {
  id: number;
  /** CPUs it asks for (Job.cpus). */
  cpus: number;
  /** Nodes it asks for at once (Job.nodes); absent = 1. */
  nodes?: number;
  /** Executor name (Job.executor). */
  executor: string;
  /** Submission time, ms since the epoch. */
  submittedAtMs: number;
  /** Job.priority, 0–1000; absent = 500. */
  priority?: number;
  /** Job.queue; absent = DEFAULT_QUEUE. */
  queue?: string;
  /** Job.userId (its submitter); absent or null: no user quota applies. */
  userId?: number | null;
}

/** A user's running-CPU quota (User.maxRunningCpus, else its role's default) and its name, for the reason text. */
export interface UserQuota {
  name: string;
  maxCpus: number;
  /** The role whose default it is (lib/jobs/quotas.ts); absent: the user's own value. */
  roleDefault?: string;
}

/** An operator queue's limits (the Queue table); null = no limit of that kind. */
export interface QueueLimits {
  /** Jobs of the queue active at once (ACTIVE_JOB_STATUSES). */
  maxRunning: number | null;
  /** CPUs the queue's active jobs hold at once. */
  maxCpus: number | null;
}

/** What a queue's active jobs hold now. */
export interface QueueUse {
  running: number;
  cpus: number;
}

/** Inputs of planAdmission(). */
export interface AdmissionInput {
  waiting: readonly WaitingJob[];
  /** CPUs held by active jobs, per executor name (missing → 0). */
  used: Readonly<Record<string, number>>;
  /** CPU budget per executor name; a job whose executor is missing here waits (with a reason). */
  total: Readonly<Record<string, number>>;
  /** Nodes per executor name, for executors that run multi-node jobs (missing → no node check). */
  totalNodes?: Readonly<Record<string, number>>;
  /** Limits per queue name (missing → none: the default queue, or a queue no longer defined). */
  queueLimits?: Readonly<Record<string, QueueLimits>>;
  /** What each queue's active jobs hold, over all executors (missing → nothing). */
  queueUsed?: Readonly<Record<string, QueueUse>>;
  /** Running-CPU quotas by user id (missing → none). */
  userQuotas?: Readonly<Record<number, UserQuota>>;
  /** CPUs each user's active jobs hold now (missing → 0). */
  userUsed?: Readonly<Record<number, number>>;
  /** Now, ms since the epoch. */
  nowMs: number;
  /** Waiting longer than this (ms) ends the job FAILED_NO_RESOURCE. */
  startTimeoutMs: number;
  /** false → admit everything (no capacity check, no queue limits). */
  enabled: boolean;
}

/** A job that ends FAILED_NO_RESOURCE, and why. */
export interface NoResource {
  id: number;
  reason: string;
}

/** The admission plan. */
export interface AdmissionPlan {
  /** Start these now, in this order. */
  admit: number[];
  /** End these FAILED_NO_RESOURCE (too big for the executor, or waited too long). */
  noResource: NoResource[];
  /** Every other job given, in line order, with why it waits (Job.pendingReason). */
  waiting: { id: number; reason: string }[];
  /** CPUs in use per executor after the admitted jobs start. */
  used: Record<string, number>;
  /**
   * Executors whose line stopped at a job that does not fit yet (every job behind it waits, or
   * ends FAILED_NO_RESOURCE when too big or past the start timeout).
   */
  blocked: string[];
  /** For each blocked executor, the priority of the job that blocks it. */
  blockedPriority: Record<string, number>;
  /**
   * Queues whose every waiting job (read or not) waits after this plan: at a limit, or held by
   * its CPU limit. With no job given, the queues full before the pass.
   */
  fullQueues: string[];
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2).replace(/0+$/, '');
}

const plural = (n: number, word: string) => `${fmt(n)} ${word}${n === 1 ? '' : 's'}`;

/**
 * The note on a waiting job's reason saying when the start timeout ends it, in whole minutes
 * rounded up (" · start timeout in 12 min"): the text changes at most once a minute, so keeping
 * it fresh costs each waiting job the pass reads one write a minute, not one a pass.
 * @param leftMs time until the timeout, > 0 (a job past it is not waiting).
 */
function timeoutNote(leftMs: number): string {
  return `${REASON_NOTE}start timeout in ${Math.max(1, Math.ceil(leftMs / 60_000))} min`;
}

/** A job's priority (absent = 500). */
export function priorityOf(j: Pick<WaitingJob, 'priority'>): number {
  return j.priority ?? DEFAULT_PRIORITY;
}

/** Line order: priority desc, then id asc (FIFO within a priority). */
export function lineOrder(a: Pick<WaitingJob, 'id' | 'priority'>, b: Pick<WaitingJob, 'id' | 'priority'>): number {
  return priorityOf(b) - priorityOf(a) || a.id - b.id;
}

/**
 * The order a plan takes jobs in: executor by executor (by name), each executor's line in line
 * order. A queue shared by two executors' jobs fills from the first executor's line first; it
 * keeps each line's part of a plan independent of the lines after it, so a pass can read the
 * lines one after the other (planAdmissionReads).
 */
export function planOrder(a: Pick<WaitingJob, 'id' | 'priority' | 'executor'>, b: Pick<WaitingJob, 'id' | 'priority' | 'executor'>): number {
  return a.executor < b.executor ? -1 : a.executor > b.executor ? 1 : lineOrder(a, b);
}

/** The queues' state while a plan is made: what they hold and which are held. */
class QueueBook {
  private readonly use = new Map<string, QueueUse>();
  /** Queue → why its jobs wait, once its CPU limit held one back (strict within the queue). */
  private readonly held = new Map<string, string>();

  constructor(
    private readonly limits: Readonly<Record<string, QueueLimits>>,
    used: Readonly<Record<string, QueueUse>>,
  ) {
    for (const [q, u] of Object.entries(used)) this.use.set(q, { ...u });
  }

  private of(q: string): QueueUse {
    let u = this.use.get(q);
    if (!u) this.use.set(q, (u = { running: 0, cpus: 0 }));
    return u;
  }

  /** Why every job of `q` waits now (at its running limit, or held by its CPU limit); null when none does. */
  limitReason(q: string): string | null {
    const lim = Object.hasOwn(this.limits, q) ? this.limits[q] : undefined;
    if (!lim) return null;
    const u = this.of(q);
    if (lim.maxRunning !== null && u.running >= lim.maxRunning) return `queue ${q} at its limit (${u.running} of ${lim.maxRunning} running)`;
    if (lim.maxCpus !== null && u.cpus >= lim.maxCpus - 1e-9) return this.cpuReason(q, u, lim.maxCpus);
    return this.held.get(q) ?? null;
  }

  private cpuReason(q: string, u: QueueUse, maxCpus: number): string {
    return `queue ${q} at its CPU limit (${fmt(u.cpus)} of ${fmt(maxCpus)} CPUs in use)`;
  }

  /**
   * Why a job of `q` needing `cpus` may not start within the queue's CPU limit; then the queue is
   * held (strict within the queue: its later jobs wait too). null when it fits.
   */
  cpuHold(q: string, cpus: number): string | null {
    const lim = Object.hasOwn(this.limits, q) ? this.limits[q] : undefined;
    if (!lim || lim.maxCpus === null) return null;
    const u = this.of(q);
    if (u.cpus + cpus <= lim.maxCpus + 1e-9) return null;
    const reason = this.cpuReason(q, u, lim.maxCpus);
    this.held.set(q, reason);
    return reason;
  }

  start(q: string, cpus: number): void {
    const u = this.of(q);
    u.running++;
    u.cpus += cpus;
  }

  /** Queues none of whose jobs can start now (limitReason is not null). */
  full(): string[] {
    const names = new Set([...Object.keys(this.limits), ...this.held.keys()]);
    return [...names].filter((q) => this.limitReason(q) !== null).sort();
  }
}

/**
 * The users' running-CPU quotas while a plan is made. A job over its user's quota waits without
 * holding up the executor's line (the CPUs are free for others) — like a queue at its limit.
 */
class UserBook {
  private readonly use = new Map<number, number>();

  constructor(
    private readonly quotas: Readonly<Record<number, UserQuota>>,
    used: Readonly<Record<number, number>>,
  ) {
    for (const [u, cpus] of Object.entries(used)) this.use.set(Number(u), cpus);
  }

  /** Why a job of `userId` needing `cpus` may not start within its user's quota; null when it fits. */
  hold(userId: number | null | undefined, cpus: number): string | null {
    if (userId === null || userId === undefined || !Object.hasOwn(this.quotas, userId)) return null;
    const q = this.quotas[userId];
    const used = this.use.get(userId) ?? 0;
    if (used + cpus <= q.maxCpus + 1e-9) return null;
    return `user ${q.name} at its CPU quota${quotaOrigin(q.roleDefault)} (${fmt(used)} of ${fmt(q.maxCpus)} CPUs running; needs ${fmt(cpus)})`;
  }

  start(userId: number | null | undefined, cpus: number): void {
    if (userId !== null && userId !== undefined) this.use.set(userId, (this.use.get(userId) ?? 0) + cpus);
  }
}

/** Plans admission (see the module comment). Pure: same input, same plan. */
export function planAdmission(input: AdmissionInput): AdmissionPlan {
  const ordered = [...input.waiting].sort(planOrder);
  const used: Record<string, number> = { ...input.used };
  const plan: AdmissionPlan = { admit: [], noResource: [], waiting: [], used, blocked: [], blockedPriority: {}, fullQueues: [] };
  const queues = new QueueBook(input.queueLimits ?? {}, input.queueUsed ?? {});
  const users = new UserBook(input.userQuotas ?? {}, input.userUsed ?? {});
  if (!input.enabled) {
    for (const j of ordered) {
      plan.admit.push(j.id);
      used[j.executor] = (used[j.executor] ?? 0) + j.cpus;
    }
    return plan;
  }
  /** Per blocked executor: the jobs of its line waiting for CPUs so far (the blocking one first). */
  const ahead = new Map<string, number>();
  for (const j of ordered) {
    const total = input.total[j.executor];
    if (total === undefined) {
      plan.waiting.push({ id: j.id, reason: `executor "${j.executor}" is not available` });
      continue;
    }
    if (j.cpus > total) {
      plan.noResource.push({ id: j.id, reason: `asks for ${fmt(j.cpus)} CPUs but the ${j.executor} executor has ${fmt(total)} in all` });
      continue;
    }
    const nodes = input.totalNodes?.[j.executor];
    if (nodes !== undefined && (j.nodes ?? 1) > nodes) {
      plan.noResource.push({ id: j.id, reason: `asks for ${j.nodes} nodes (num_nodes) but the ${j.executor} executor has ${nodes} in all` });
      continue;
    }
    const queue = j.queue ?? DEFAULT_QUEUE;
    const inUse = used[j.executor] ?? 0;
    const before = ahead.get(j.executor);
    const needs = `needs ${plural(j.cpus, 'CPU')}, ${fmt(Math.max(0, total - inUse))} of ${fmt(total)} free`;
    // Order matters for partial reads (planAdmissionReads): a job behind its line's block
    // changes nothing; a queue is held only by a job that would otherwise start.
    let held = queues.limitReason(queue) ?? users.hold(j.userId, j.cpus);
    let reason = held;
    if (reason === null && before !== undefined) reason = `${plural(before, 'job')} ahead at priority ≥ ${priorityOf(j)}`;
    if (reason === null && inUse + j.cpus > total + 1e-9) reason = needs;
    if (reason === null) reason = held = queues.cpuHold(queue, j.cpus);
    if (reason === null) {
      plan.admit.push(j.id);
      used[j.executor] = inUse + j.cpus;
      queues.start(queue, j.cpus);
      users.start(j.userId, j.cpus);
      continue;
    }
    if (input.nowMs - j.submittedAtMs >= input.startTimeoutMs) {
      // Not the place in line: the verdict must not depend on how much of the line was read.
      plan.noResource.push({ id: j.id, reason: `could not start within ${fmt(input.startTimeoutMs / 1000)} s (JOBDECK_START_TIMEOUT_MS): ${held ?? needs}` });
      continue;
    }
    plan.waiting.push({ id: j.id, reason: `${reason}${timeoutNote(j.submittedAtMs + input.startTimeoutMs - input.nowMs)}` });
    if (held !== null) continue; // held by its queue: not in the executor line's way
    if (before === undefined) {
      plan.blocked.push(j.executor);
      plan.blockedPriority[j.executor] = priorityOf(j);
    }
    ahead.set(j.executor, (before ?? 0) + 1);
  }
  plan.fullQueues = queues.full();
  return plan;
}

/** The PENDING jobs of one executor, summarized (one aggregate query, no rows read). */
export interface QueueSummary {
  executor: string;
  /** PENDING jobs without a cancel request. */
  count: number;
  /** Smallest and largest Job.cpus among them. */
  minCpus: number;
  maxCpus: number;
  /** Largest Job.nodes among them (absent = 1). */
  maxNodes?: number;
  /** Oldest Job.submittedAt among them, ms since the epoch. */
  oldestSubmittedAtMs: number;
}

/**
 * Which waiting jobs of one executor admission must read so that planAdmission() over just those
 * rows gives the same admit / noResource verdicts as over the whole line (the others would only
 * wait), and a reason for the first of them:
 * - `all`: every waiting job (the check is off: they are all admitted);
 * - always the first page of the line (priority desc, id asc), for the reasons of the jobs
 *   nearest the front; then, when `head`, further pages until planAdmission() reports the
 *   executor `blocked` — `head` is false when not even the smallest job fits the free CPUs. The
 *   lines are read one after the other in planOrder, each plan over the rows read so far (earlier
 *   lines' too); the jobs of the queues that plan reports in `fullQueues` all wait: they are
 *   skipped from the next page on, and one page of each is read for the reasons only;
 * - `cpusAbove`: also every job asking for more CPUs than this (more than the executor has);
 * - `nodesAbove`: also every job asking for more nodes than this (more than the executor has);
 * - `submittedAtOrBefore`: also every job submitted at or before this (ms since the epoch):
 *   past the start timeout.
 * null when the line is empty, or (check on) its executor is not available: its jobs wait, none
 * needs reading.
 */
export interface QueueReads {
  all: boolean;
  head: boolean;
  cpusAbove: number | null;
  nodesAbove?: number | null;
  submittedAtOrBefore: number | null;
}

/**
 * Plans the reads of an admission pass (see QueueReads) from the line summaries, so that a pass
 * costs O(jobs it decides on + one page) instead of O(jobs waiting): with the CPUs all taken, it
 * reads one page (for the reasons) and the too-big and too-old jobs.
 * Pure. Same inputs as planAdmission(), with summaries instead of rows.
 */
export function planAdmissionReads(input: Omit<AdmissionInput, 'waiting'> & { queue: QueueSummary }): QueueReads | null {
  const { queue: q } = input;
  if (q.count === 0) return null;
  if (!input.enabled) return { all: true, head: false, cpusAbove: null, submittedAtOrBefore: null };
  const total = input.total[q.executor];
  if (total === undefined) return null;
  const cutoff = input.nowMs - input.startTimeoutMs;
  const nodes = input.totalNodes?.[q.executor];
  return {
    all: false,
    // The same fit test as planAdmission (same expression, same rounding), for the smallest job.
    head: (input.used[q.executor] ?? 0) + q.minCpus <= total + 1e-9,
    cpusAbove: q.maxCpus > total ? total : null,
    ...(nodes !== undefined && (q.maxNodes ?? 1) > nodes ? { nodesAbove: nodes } : {}),
    submittedAtOrBefore: q.oldestSubmittedAtMs <= cutoff ? cutoff : null,
  };
}
