/**
 * The admission pass's reads of what is held (docs/design.md §6 "Admission"): CPUs and GPUs per
 * executor, queue and status with a summary of each line; the users' running-CPU and GPU quotas
 * and what their active jobs hold; the CPUs of jobs whose leftovers are still being stopped.
 */
import { ACTIVE_JOB_STATUSES, type UserQuota } from '../jobs/capacity';
import { effectiveQuota, QUOTA_ROLES, type RoleQuotas } from '../jobs/quotas';
import { isRole } from '../jobs/roles';
import type { StoreScope } from './handle';
import { FOLD_ABOVE } from './status-counts';

/** The statuses that hold CPUs (their delta rows are what is held). */
const HELD: ReadonlySet<string> = new Set(ACTIVE_JOB_STATUSES);

/** One group of the admission aggregate: jobs of one executor and one queue in one status. */
export interface QueueGroup {
  executor: string;
  queue: string;
  status: string;
  count: number;
  sumCpus: number;
  /** Job.gpus summed (what the group's active jobs hold, for queue limits). */
  sumGpus: number;
  minCpus: number;
  maxCpus: number;
  /** Largest Job.nodes of the group. */
  maxNodes: number;
  /** Oldest submittedAt of the group (ms), 0 when unknown. */
  oldestSubmittedAtMs: number;
}

/**
 * CPUs and GPUs held per executor and queue (active jobs) and a summary of each line (PENDING, no
 * cancel request, not waiting for other jobs), in one statement: what is held from the delta rows
 * the Job triggers keep (JobStatusDelta, the statuses that hold CPUs: lib/jobs/capacity
 * ACTIVE_JOB_STATUSES) — a pass reads them after every submit and every second, and an aggregate
 * over the active jobs grew with every one running; the lines from the PENDING jobs (their index).
 * `fold`: called when the delta rows have grown past FOLD_ABOVE (status-counts.ts), to fold them.
 */
export async function queueGroups(store: StoreScope, fold?: () => Promise<void>): Promise<QueueGroup[]> {
  const rows = await store.prisma.$queryRawUnsafe<Array<{ status: string; executor: string; queue: string; count: number; sumCpus: number; sumGpus: number; minCpus: number; maxCpus: number; maxNodes: number; oldest: number | null; rows: number; delta: boolean }>>(
    `SELECT "status"::text AS "status", "executor", "queue", sum("n")::int AS "count", sum("cpus")::float8 AS "sumCpus", sum("gpus")::float8 AS "sumGpus",` +
      ` 0::float8 AS "minCpus", 0::float8 AS "maxCpus", 1 AS "maxNodes", NULL::float8 AS "oldest", count(*)::int AS "rows", true AS "delta"` +
      // Every status's rows, so that `rows` counts all of them for the fold; the held ones are kept below.
      ` FROM "JobStatusDelta" GROUP BY "status", "executor", "queue"` +
      ` UNION ALL SELECT 'PENDING', "executor", "queue", count(*)::int, sum("cpus")::float8, sum("gpus")::float8, min("cpus")::float8, max("cpus")::float8, max("nodes")::int,` +
      ` (EXTRACT(EPOCH FROM min("submittedAt")) * 1000)::float8, 0, false` +
      ` FROM "Job" WHERE "status" = 'PENDING' AND "cancelRequestedAt" IS NULL AND NOT "depsWaiting" GROUP BY "executor", "queue"`,
  );
  if (fold && rows.reduce((n, r) => n + Number(r.rows), 0) > FOLD_ABOVE) await fold();
  return rows
    .filter((g) => !g.delta || (HELD.has(g.status) && (Number(g.count) !== 0 || Math.abs(Number(g.sumCpus)) > 1e-9)))
    .map((g) => ({
      executor: g.executor,
      queue: g.queue,
      status: g.status,
      count: Number(g.count),
      sumCpus: Number(g.sumCpus) || 0,
      sumGpus: Number(g.sumGpus) || 0,
      minCpus: Number(g.minCpus) || 0,
      maxCpus: Number(g.maxCpus) || 0,
      maxNodes: Number(g.maxNodes) || 1,
      oldestSubmittedAtMs: g.oldest === null ? 0 : Math.round(Number(g.oldest)),
    }));
}

/** What userQuotas() reads: the quotas and what each user's active jobs hold. */
export interface UserQuotaRead {
  quotas: Record<number, UserQuota>;
  /** CPUs per user id. */
  used: Record<number, number>;
  /** GPUs (Job.gpus) per user id. */
  gpusUsed: Record<number, number>;
}

/**
 * The users' running-CPU and running-GPU quotas — User.maxRunningCpus / maxRunningGpus, else
 * their role's default in `defaults` (lib/jobs/quotas.ts) — and the CPUs and GPUs their active
 * jobs hold; empty when no user has one. Two queries, one when no user has a quota.
 */
export async function userQuotas(store: StoreScope, defaults: RoleQuotas): Promise<UserQuotaRead> {
  const defaulted = QUOTA_ROLES.filter((r) => defaults[r]?.maxRunningCpus != null || defaults[r]?.maxRunningGpus != null);
  const rows = await store.prisma.user.findMany({
    where: { OR: [{ maxRunningCpus: { not: null } }, { maxRunningGpus: { not: null } }, ...(defaulted.length ? [{ role: { in: [...defaulted] } }] : [])] },
    select: { id: true, name: true, role: true, maxRunningCpus: true, maxRunningGpus: true },
  });
  const quotas: Record<number, UserQuota> = {};
  for (const r of rows) {
    const user = { role: isRole(r.role) ? r.role : 'viewer', maxPendingJobs: null, maxRunningCpus: r.maxRunningCpus, maxRunningGpus: r.maxRunningGpus } as const;
    const cpu = effectiveQuota(user, 'maxRunningCpus', defaults);
    const gpu = effectiveQuota(user, 'maxRunningGpus', defaults);
    if (cpu.value === null && gpu.value === null) continue;
    quotas[r.id] = {
      name: r.name,
      ...(cpu.value !== null ? { maxCpus: cpu.value, ...(cpu.source === 'role' ? { roleDefault: r.role } : {}) } : {}),
      ...(gpu.value !== null ? { maxGpus: gpu.value, ...(gpu.source === 'role' ? { gpusRoleDefault: r.role } : {}) } : {}),
    };
  }
  const ids = Object.keys(quotas).map(Number);
  if (ids.length === 0) return { quotas: {}, used: {}, gpusUsed: {} };
  const groups = await store.prisma.job.groupBy({ by: ['userId'], where: { userId: { in: ids }, status: { in: [...ACTIVE_JOB_STATUSES] } }, _sum: { cpus: true, gpus: true } });
  const held = groups.filter((g) => g.userId !== null);
  return { quotas, used: Object.fromEntries(held.map((g) => [g.userId!, g._sum.cpus ?? 0])), gpusUsed: Object.fromEntries(held.map((g) => [g.userId!, g._sum.gpus ?? 0])) };
}

/** CPUs and executor of those of `jobIds` that are no longer active (their leftovers are being stopped). */
export function inactiveCpus(store: StoreScope, jobIds: number[]): Promise<Array<{ cpus: number; executor: string }>> {
  return store.prisma.job.findMany({
    where: { id: { in: jobIds }, status: { notIn: [...ACTIVE_JOB_STATUSES] } },
    select: { cpus: true, executor: true },
  });
}
