/**
 * Admission: which PENDING jobs may start now. Pure; the monitor reads the inputs and applies the
 * plan with guarded writes (docs/design.md §6, "Admission"). Per executor, in job id order, a job
 * starts while its `Job.cpus` fit the CPU budget left by the ACTIVE_JOB_STATUSES jobs; the oldest
 * job that does not fit blocks the younger ones (no backfill: a big job is never starved); a job
 * bigger than the whole budget, or waiting `startTimeoutMs` (JOBDECK_START_TIMEOUT_MS, 1 h), ends
 * FAILED_NO_RESOURCE without blocking the queue — as does a job asking for more nodes at once
 * (`num_nodes`) than the executor has; `enabled: false` (JOBDECK_CAPACITY_CHECK=0) admits every
 * job. A multi-node job's `Job.cpus` is already nodes × CPUs per node.
 */

/** Job statuses that hold their CPUs. */
export const ACTIVE_JOB_STATUSES = ['STARTING', 'RUNNING', 'RECOVERING', 'CANCELLING'] as const;

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
  /** Now, ms since the epoch. */
  nowMs: number;
  /** Waiting longer than this (ms) ends the job FAILED_NO_RESOURCE. */
  startTimeoutMs: number;
  /** false → admit everything (no capacity check). */
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
  /** Still waiting, with the reason (shown as the job's state while PENDING). */
  waiting: { id: number; reason: string }[];
  /** CPUs in use per executor after the admitted jobs start. */
  used: Record<string, number>;
  /**
   * Executors whose queue stopped at a job that does not fit yet (every younger job of theirs
   * waits, or ends FAILED_NO_RESOURCE when too big or past the start timeout).
   */
  blocked: string[];
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2).replace(/0+$/, '');
}

/** Plans admission (see the module comment). Pure: same input, same plan. */
export function planAdmission(input: AdmissionInput): AdmissionPlan {
  const ordered = [...input.waiting].sort((a, b) => a.id - b.id);
  const used: Record<string, number> = { ...input.used };
  const plan: AdmissionPlan = { admit: [], noResource: [], waiting: [], used, blocked: [] };
  if (!input.enabled) {
    for (const j of ordered) {
      plan.admit.push(j.id);
      used[j.executor] = (used[j.executor] ?? 0) + j.cpus;
    }
    return plan;
  }
  /** Executors whose queue is blocked by an older job that does not fit yet. */
  const blocked = new Set<string>();
  for (const j of ordered) {
    const total = input.total[j.executor];
    const waitedMs = input.nowMs - j.submittedAtMs;
    if (total === undefined) {
      plan.waiting.push({ id: j.id, reason: `executor "${j.executor}" is not available` });
      continue;
    }
    if (j.cpus > total) {
      plan.noResource.push({
        id: j.id,
        reason: `asks for ${fmt(j.cpus)} CPUs but the ${j.executor} executor has ${fmt(total)} in all`,
      });
      continue;
    }
    const nodes = input.totalNodes?.[j.executor];
    if (nodes !== undefined && (j.nodes ?? 1) > nodes) {
      plan.noResource.push({ id: j.id, reason: `asks for ${j.nodes} nodes (num_nodes) but the ${j.executor} executor has ${nodes} in all` });
      continue;
    }
    const inUse = used[j.executor] ?? 0;
    if (!blocked.has(j.executor) && inUse + j.cpus <= total + 1e-9) {
      plan.admit.push(j.id);
      used[j.executor] = inUse + j.cpus;
      continue;
    }
    if (waitedMs >= input.startTimeoutMs) {
      plan.noResource.push({
        id: j.id,
        reason: `could not start within ${fmt(input.startTimeoutMs / 1000)} s (JOBDECK_START_TIMEOUT_MS): needs ${fmt(j.cpus)} CPUs, ${fmt(Math.max(0, total - inUse))} of ${fmt(total)} free`,
      });
      continue;
    }
    if (!blocked.has(j.executor)) plan.blocked.push(j.executor);
    blocked.add(j.executor);
    plan.waiting.push({
      id: j.id,
      reason: `waiting for ${fmt(j.cpus)} CPUs: ${fmt(Math.max(0, total - inUse))} of ${fmt(total)} free`,
    });
  }
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
 * rows gives the same admit / noResource verdicts as over the whole queue (the others would only
 * wait):
 * - `all`: every waiting job (the check is off: they are all admitted);
 * - `head`: the queue from its oldest job, in id order, until planAdmission() reports the
 *   executor `blocked` (read in pages) — false when not even the smallest job fits the free CPUs;
 * - `cpusAbove`: also every job asking for more CPUs than this (more than the executor has);
 * - `nodesAbove`: also every job asking for more nodes than this (more than the executor has);
 * - `submittedAtOrBefore`: also every job submitted at or before this (ms since the epoch):
 *   past the start timeout.
 * null when the queue is empty, or (check on) its executor is not available: its jobs wait, none
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
 * Plans the reads of an admission pass (see QueueReads) from the queue summaries, so that a pass
 * costs O(jobs it decides on) instead of O(jobs waiting): with the CPUs all taken, it reads none.
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
