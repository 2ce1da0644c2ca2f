/**
 * Admission: which PENDING jobs may start now, and why the others wait. Pure; the monitor reads
 * the inputs and applies the plan with guarded writes (docs/design.md §6, "Admission").
 *
 * Per executor, jobs form ONE line in (priority desc, id asc) order — higher priority first,
 * FIFO within a priority — and start while their `Job.cpus` fit the CPU budget left by the
 * ACTIVE_JOB_STATUSES jobs and, on an executor that grants GPU devices (local), their GPUs fit its
 * free devices (lib/jobs/gpus.ts GpuPool: the plan names the devices each admitted job gets).
 * Strict priority: the first job of the line that does not fit blocks everything behind it (no
 * backfill: a big job is never starved, and the order is predictable). A job whose queue is at
 * its limit (running jobs, CPUs or GPUs; the `default` queue has none) or whose user is at a
 * quota waits without blocking the line; behind a job of its own queue that the queue's CPU or
 * GPU limit holds, the rest of that queue waits too. A job bigger than the whole budget (CPUs,
 * nodes, or GPUs the executor can never grant) ends FAILED_NO_RESOURCE without blocking the line,
 * as does one waiting past its start timeout — its queue's, else `startTimeoutMs`
 * (JOBDECK_START_TIMEOUT_MS; null, the default: none, a job waits as long as it must);
 * `enabled: false` (JOBDECK_CAPACITY_CHECK=0) admits every job. A multi-node job's `Job.cpus` is
 * already nodes × CPUs per node. Every job read that still waits gets a reason (Job.pendingReason).
 */

import { GpuPool, type GpuDevice, type GpuGrant, type GpuOption } from './gpus';
import { quotaOrigin } from './quotas';
import { JOB_STATUSES, type JobStatus } from './status';
import { DEFAULT_QUEUE } from './spec/schema';
import { REASON_NOTE, type JobPlace } from './waiting';

export type { JobPlace } from './waiting';

/**
 * Whether a job in each status holds its CPUs: from its launch until its end (a cancelling job
 * still runs). A Record over JobStatus, so a new status is a tsc error here until it is decided.
 */
const HOLDS_CPUS: { readonly [S in JobStatus]: boolean } = {
  PENDING: false,
  STARTING: true,
  RUNNING: true,
  RECOVERING: true,
  CANCELLING: true,
  SUCCEEDED: false,
  CANCELLED: false,
  FAILED: false,
  FAILED_SETUP: false,
  FAILED_PRECHECKS: false,
  FAILED_NO_RESOURCE: false,
  FAILED_CONTROLLER: false,
};

/** Job statuses that hold their CPUs (HOLDS_CPUS): STARTING, RUNNING, RECOVERING, CANCELLING. */
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = JOB_STATUSES.filter((s) => HOLDS_CPUS[s]);

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
  /** GPUs in all (Job.gpus: per node × nodes), for the queue limits and user quotas; absent = 0. */
  gpus?: number;
  /** The GPU alternatives per node (Job.gpuRequest), for an executor that grants devices; absent: none. */
  gpuOptions?: readonly GpuOption[];
}

/**
 * A user's running quotas (User.maxRunningCpus / maxRunningGpus, else its role's defaults) and
 * its name, for the reason text; absent: no quota of that kind.
 */
export interface UserQuota {
  name: string;
  maxCpus?: number;
  /** The role whose default maxCpus is (lib/jobs/quotas.ts); absent: the user's own value. */
  roleDefault?: string;
  maxGpus?: number;
  /** The role whose default maxGpus is; absent: the user's own value. */
  gpusRoleDefault?: string;
}

/** An operator queue's limits (the Queue table); null = no limit of that kind. */
export interface QueueLimits {
  /** Jobs of the queue active at once (ACTIVE_JOB_STATUSES). */
  maxRunning: number | null;
  /** CPUs the queue's active jobs hold at once. */
  maxCpus: number | null;
  /** GPUs the queue's active jobs hold at once (Job.gpus); absent or null: no limit. */
  maxGpus?: number | null;
  /** The queue's own start timeout (ms); absent or null: the server's. */
  startTimeoutMs?: number | null;
}

/** What a queue's active jobs hold now. */
export interface QueueUse {
  running: number;
  cpus: number;
  /** GPUs (Job.gpus); absent = 0. */
  gpus?: number;
}

/** An executor's GPU devices as a plan sees them (one that grants devices: local). */
export interface GpuPoolInput {
  devices: readonly GpuDevice[];
  /** Grants of the jobs that hold GPUs now (active, or being reaped; Job.gpuGrant). */
  granted: ReadonlyArray<GpuGrant | null>;
  /** Device indices held by processes jobdeck did not start (nvidia-smi): never granted. */
  held?: readonly number[];
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
  /** GPUs each user's active jobs hold now (missing → 0). */
  userGpusUsed?: Readonly<Record<number, number>>;
  /** GPU devices per executor that grants them (missing: GPUs are not planned there — Slurm's own scheduler does). */
  gpuPools?: Readonly<Record<string, GpuPoolInput>>;
  /** Now, ms since the epoch. */
  nowMs: number;
  /** Waiting longer than this (ms) ends the job FAILED_NO_RESOURCE, unless its queue has its own; null: no timeout. */
  startTimeoutMs: number | null;
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
  /** The GPU devices each admitted job gets, by job id (jobs of an executor that grants devices, asking for GPUs). */
  grants: Record<number, GpuGrant>;
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
  private readonly use = new Map<string, Required<QueueUse>>();
  /** Queue → why its jobs wait, once its CPU or GPU limit held one back (strict within the queue). */
  private readonly held = new Map<string, string>();

  constructor(
    private readonly limits: Readonly<Record<string, QueueLimits>>,
    used: Readonly<Record<string, QueueUse>>,
  ) {
    for (const [q, u] of Object.entries(used)) this.use.set(q, { gpus: 0, ...u });
  }

  private of(q: string): Required<QueueUse> {
    let u = this.use.get(q);
    if (!u) this.use.set(q, (u = { running: 0, cpus: 0, gpus: 0 }));
    return u;
  }

  private limitsOf(q: string): QueueLimits | undefined {
    return Object.hasOwn(this.limits, q) ? this.limits[q] : undefined;
  }

  /** The queue's own start timeout (ms); undefined when it has none (the server's applies). */
  startTimeout(q: string): number | null | undefined {
    const t = this.limitsOf(q)?.startTimeoutMs;
    return t === null || t === undefined ? undefined : t;
  }

  /** Why every job of `q` waits now (at its running limit, or held by its CPU or GPU limit); null when none does. */
  limitReason(q: string): string | null {
    const lim = this.limitsOf(q);
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
   * Why a job of `q` needing `cpus` and `gpus` may not start within the queue's CPU and GPU
   * limits; then the queue is held (strict within the queue: its later jobs wait too). null when
   * it fits.
   */
  hold(q: string, cpus: number, gpus: number): string | null {
    const lim = this.limitsOf(q);
    if (!lim) return null;
    const u = this.of(q);
    let reason: string | null = null;
    if (lim.maxCpus !== null && u.cpus + cpus > lim.maxCpus + 1e-9) reason = this.cpuReason(q, u, lim.maxCpus);
    else if (gpus > 0 && lim.maxGpus != null && u.gpus + gpus > lim.maxGpus + 1e-9) reason = `queue ${q} at its GPU limit (${fmt(u.gpus)} of ${fmt(lim.maxGpus)} GPUs in use; needs ${fmt(gpus)})`;
    if (reason !== null) this.held.set(q, reason);
    return reason;
  }

  start(q: string, cpus: number, gpus: number): void {
    const u = this.of(q);
    u.running++;
    u.cpus += cpus;
    u.gpus += gpus;
  }

  /** Queues none of whose jobs can start now (limitReason is not null). */
  full(): string[] {
    const names = new Set([...Object.keys(this.limits), ...this.held.keys()]);
    return [...names].filter((q) => this.limitReason(q) !== null).sort();
  }
}

/**
 * The users' running quotas (CPUs, GPUs) while a plan is made. A job over its user's quota waits
 * without holding up the executor's line (the CPUs and GPUs are free for others) — like a queue
 * at its limit.
 */
class UserBook {
  private readonly cpus = new Map<number, number>();
  private readonly gpus = new Map<number, number>();

  constructor(
    private readonly quotas: Readonly<Record<number, UserQuota>>,
    used: Readonly<Record<number, number>>,
    gpusUsed: Readonly<Record<number, number>>,
  ) {
    for (const [u, n] of Object.entries(used)) this.cpus.set(Number(u), n);
    for (const [u, n] of Object.entries(gpusUsed)) this.gpus.set(Number(u), n);
  }

  /** Why a job of `userId` needing `cpus` and `gpus` may not start within its user's quotas; null when it fits. */
  hold(userId: number | null | undefined, cpus: number, gpus: number): string | null {
    if (userId === null || userId === undefined || !Object.hasOwn(this.quotas, userId)) return null;
    const q = this.quotas[userId];
    const usedCpus = this.cpus.get(userId) ?? 0;
    if (q.maxCpus !== undefined && usedCpus + cpus > q.maxCpus + 1e-9) {
      return `user ${q.name} at its CPU quota${quotaOrigin(q.roleDefault)} (${fmt(usedCpus)} of ${fmt(q.maxCpus)} CPUs running; needs ${fmt(cpus)})`;
    }
    const usedGpus = this.gpus.get(userId) ?? 0;
    if (gpus > 0 && q.maxGpus !== undefined && usedGpus + gpus > q.maxGpus + 1e-9) {
      return `user ${q.name} at its GPU quota${quotaOrigin(q.gpusRoleDefault)} (${fmt(usedGpus)} of ${fmt(q.maxGpus)} GPUs running; needs ${fmt(gpus)})`;
    }
    return null;
  }

  start(userId: number | null | undefined, cpus: number, gpus: number): void {
    if (userId === null || userId === undefined) return;
    this.cpus.set(userId, (this.cpus.get(userId) ?? 0) + cpus);
    this.gpus.set(userId, (this.gpus.get(userId) ?? 0) + gpus);
  }
}

/** Each executor's GPU pool for a plan (lib/jobs/gpus.ts), from the plan's input. */
function poolsOf(input: AdmissionInput): Map<string, GpuPool> {
  const pools = new Map<string, GpuPool>();
  for (const [ex, p] of Object.entries(input.gpuPools ?? {})) {
    // A held device that jobdeck granted is its own job's: only the others are out.
    const granted = new Set(p.granted.flatMap((g) => (g ? g.devices.map((d) => d.index) : [])));
    pools.set(ex, new GpuPool(p.devices, p.granted, new Set((p.held ?? []).filter((i) => !granted.has(i)))));
  }
  return pools;
}

/** Why a job can never start on its executor (too big), or null. */
function tooBig(j: WaitingJob, total: number, input: AdmissionInput, pool: GpuPool | undefined): string | null {
  if (j.cpus > total) return `asks for ${fmt(j.cpus)} CPUs but the ${j.executor} executor has ${fmt(total)} in all`;
  const nodes = input.totalNodes?.[j.executor];
  if (nodes !== undefined && (j.nodes ?? 1) > nodes) return `asks for ${j.nodes} nodes (num_nodes) but the ${j.executor} executor has ${nodes} in all`;
  const never = pool && j.gpuOptions?.length ? pool.never(j.gpuOptions) : null;
  return never ? never.replace('the executor', `the ${j.executor} executor`) : null;
}

/** The start timeout that applies to a job of `queue` (ms), null for none. */
function timeoutOf(queues: QueueBook, queue: string, input: AdmissionInput): number | null {
  const own = queues.startTimeout(queue);
  return own !== undefined ? own : input.startTimeoutMs;
}

/** Plans admission (see the module comment). Pure: same input, same plan. */
export function planAdmission(input: AdmissionInput): AdmissionPlan {
  const ordered = [...input.waiting].sort(planOrder);
  const used: Record<string, number> = { ...input.used };
  const plan: AdmissionPlan = { admit: [], grants: {}, noResource: [], waiting: [], used, blocked: [], blockedPriority: {}, fullQueues: [] };
  const queues = new QueueBook(input.queueLimits ?? {}, input.queueUsed ?? {});
  const users = new UserBook(input.userQuotas ?? {}, input.userUsed ?? {}, input.userGpusUsed ?? {});
  const pools = poolsOf(input);
  const admit = (j: WaitingJob, grant: GpuGrant | null) => {
    plan.admit.push(j.id);
    if (grant) plan.grants[j.id] = grant;
    used[j.executor] = (used[j.executor] ?? 0) + j.cpus;
  };
  if (!input.enabled) {
    for (const j of ordered) admit(j, j.gpuOptions?.length ? (pools.get(j.executor)?.grant(j.gpuOptions) ?? null) : null);
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
    const pool = pools.get(j.executor);
    const big = tooBig(j, total, input, pool);
    if (big !== null) {
      plan.noResource.push({ id: j.id, reason: big });
      continue;
    }
    const queue = j.queue ?? DEFAULT_QUEUE;
    const gpus = j.gpus ?? 0;
    const inUse = used[j.executor] ?? 0;
    const before = ahead.get(j.executor);
    const options = pool && j.gpuOptions?.length ? j.gpuOptions : null;
    const cpusFit = inUse + j.cpus <= total + 1e-9;
    const gpusFit = !options || options.some((o) => pool!.fit(o) !== null);
    const cpuNeeds = `needs ${plural(j.cpus, 'CPU')}, ${fmt(Math.max(0, total - inUse))} of ${fmt(total)} free`;
    // What it needs: said in the timeout verdict too, which must not depend on the place in line.
    const needs = !cpusFit || gpusFit ? cpuNeeds : pool!.shortReason(options!);
    // Order matters for partial reads (planAdmissionReads): a job behind its line's block
    // changes nothing; a queue is held only by a job that would otherwise start.
    let held = queues.limitReason(queue) ?? users.hold(j.userId, j.cpus, gpus);
    let reason = held;
    if (reason === null && before !== undefined) reason = `${plural(before, 'job')} ahead at priority ≥ ${priorityOf(j)}`;
    if (reason === null && !(cpusFit && gpusFit)) reason = needs;
    if (reason === null) reason = held = queues.hold(queue, j.cpus, gpus);
    if (reason === null) {
      admit(j, options ? pool!.grant(options) : null);
      queues.start(queue, j.cpus, gpus);
      users.start(j.userId, j.cpus, gpus);
      continue;
    }
    const timeout = timeoutOf(queues, queue, input);
    if (timeout !== null && input.nowMs - j.submittedAtMs >= timeout) {
      // Not the place in line: the verdict must not depend on how much of the line was read.
      const setting = queues.startTimeout(queue) !== undefined ? `queue ${queue}'s start timeout` : 'JOBDECK_START_TIMEOUT_MS';
      plan.noResource.push({ id: j.id, reason: `could not start within ${fmt(timeout / 1000)} s (${setting}): ${held ?? needs}` });
      continue;
    }
    plan.waiting.push({ id: j.id, reason: `${reason}${timeout !== null ? timeoutNote(j.submittedAtMs + timeout - input.nowMs) : ''}` });
    if (held !== null) continue; // held by its queue or user: not in the executor line's way
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
  // The shortest start timeout that may apply (the server's, or any queue's own): every job past it is read.
  const timeouts = [input.startTimeoutMs, ...Object.values(input.queueLimits ?? {}).map((l) => l.startTimeoutMs ?? null)].filter((t): t is number => t !== null);
  const cutoff = timeouts.length ? input.nowMs - Math.min(...timeouts) : null;
  const nodes = input.totalNodes?.[q.executor];
  return {
    all: false,
    // The same fit test as planAdmission (same expression, same rounding), for the smallest job.
    head: (input.used[q.executor] ?? 0) + q.minCpus <= total + 1e-9,
    cpusAbove: q.maxCpus > total ? total : null,
    ...(nodes !== undefined && (q.maxNodes ?? 1) > nodes ? { nodesAbove: nodes } : {}),
    submittedAtOrBefore: cutoff !== null && q.oldestSubmittedAtMs <= cutoff ? cutoff : null,
  };
}

/** A waiting job as placesInLine() takes it: planAdmission's input, with its GPUs (Job.gpus). */
export type PlacedJob = Pick<WaitingJob, 'id' | 'executor' | 'cpus' | 'priority' | 'queue'> & { gpus?: number };

/**
 * The places of the jobs a plan left waiting (`waiting`, any order; only those, so a job admitted
 * by the pass no longer counts as ahead). `exactThrough`, per executor: the last job (in line
 * order) up to which the pass read every waiting job of that line — `'all'` when it read the
 * whole line; a job after it gets no overall position (its queue position is still exact: a
 * pass reads each queue of a line from its front). An executor missing there gets no overall
 * positions.
 */
export function placesInLine(waiting: readonly PlacedJob[], exactThrough: Readonly<Record<string, Pick<WaitingJob, 'id' | 'priority'> | 'all'>>): Map<number, JobPlace> {
  const out = new Map<number, JobPlace>();
  const byExecutor = new Map<string, PlacedJob[]>();
  for (const j of waiting) {
    const l = byExecutor.get(j.executor);
    if (l) l.push(j);
    else byExecutor.set(j.executor, [j]);
  }
  for (const [executor, line] of byExecutor) {
    line.sort(lineOrder);
    const exact = exactThrough[executor];
    const inQueue = new Map<string, number>();
    let cpus = 0;
    let gpus = 0;
    line.forEach((j, i) => {
      const q = j.queue ?? DEFAULT_QUEUE;
      const queuePosition = (inQueue.get(q) ?? 0) + 1;
      inQueue.set(q, queuePosition);
      const known = exact === 'all' || (exact !== undefined && lineOrder(j, exact) <= 0);
      out.set(j.id, { position: known ? i + 1 : null, queuePosition, ahead: known ? { jobs: i, cpus: round(cpus), gpus: round(gpus) } : null });
      cpus += j.cpus;
      gpus += j.gpus ?? 0;
    });
  }
  return out;
}

/** Sums of fractional CPUs without float noise (0.1 + 0.2 → 0.3). */
function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
