import type { Prisma, PrismaClient } from '../generated/prisma/client';
import { ACTIVE_JOB_STATUSES, type QueueLimits, type UserQuota, type WaitingJob } from '../jobs/capacity';
import { effectiveQuota, QUOTA_ROLES, type RoleQuotas } from '../jobs/quotas';
import { isRole } from '../jobs/roles';
import { JOB_TERMINAL, type JobStatus } from '../jobs/status';
import type { UsagePoint } from '../jobs/usage';
import {
  deleteJobsPastRetention,
  recordUploadsRemoved,
  jobsPastRetention,
  referencedUploads,
  jobsWithExpiredLogs,
  oldestJobsWithLogs,
  recordLogsRemoved,
  attemptsToCompress,
  recordLogsCompressed,
  type CompressCandidate,
  type LogsRemoved,
  type RetentionJob,
  claimDeliveries,
  nextDeliveryDue,
  recordDelivered,
  recordGaveUp,
  recordRetry,
  subscriptionsById,
  type ClaimedDelivery,
  type DeliveryResult,
  hostCpus,
  withHostLock,
  clearPendingReasons,
  recordUsage,
  setPendingReasons,
  storedUsage,
  usageSeries,
  usageTargets,
  type StoredUsage,
  type UsageTarget,
  type UsageWrite,
  startAttempt,
  submitStatementStats,
  transitionMany,
  type AnyTransition,
  type Fence,
  type BatchOutcome,
  type Store,
  type StoreBus,
  type SubmitStatementStats,
  type TransitionOutcome,
} from '../store';
import type { WebhookSubscription } from '../generated/prisma/client';
import { TransientDatabaseError } from './errors';
import type { Attempt, Job } from '../generated/prisma/client';
import type { FaultSite, JobRow } from './types';

/** Longest hold of the host's admission lock (ms): a pass with its launches takes far less. */
const HOST_LOCK_MS = 30_000;

/**
 * Every database statement the monitor makes, in one module: the guarded writes of the store
 * (docs/design.md §4) and the few reads the loop and admission need. Reads go through the
 * fault injection (failNextRead) so a test can fail exactly one of them.
 */

export type { AnyTransition, BatchOutcome, StoreEvent, Transition, TransitionOutcome } from '../store';

/** Read failures queued by Monitor.failNextRead(), each consumed by the next read at its site. */
export class Faults {
  private readonly queue: Array<{ site: FaultSite; err: Error }> = [];

  /** Queues `err` (default: a temporary database failure) for the next read at `site`. */
  push(site: FaultSite = 'any', err: Error = new TransientDatabaseError()): void {
    this.queue.push({ site, err });
  }

  /** Throws the first queued failure for `site` (or for 'any'), if one is queued. */
  consume(site: FaultSite): void {
    const i = this.queue.findIndex((f) => f.site === site || f.site === 'any');
    if (i >= 0) {
      const [f] = this.queue.splice(i, 1);
      throw f.err;
    }
  }
}

/** One group of the admission aggregate: jobs of one executor and one queue in one status. */
export interface QueueGroup {
  executor: string;
  queue: string;
  status: string;
  count: number;
  sumCpus: number;
  minCpus: number;
  maxCpus: number;
  /** Largest Job.nodes of the group. */
  maxNodes: number;
  /** Oldest submittedAt of the group (ms), 0 when unknown. */
  oldestSubmittedAtMs: number;
}

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

/** What startAttempt() takes (lib/store). */
export type StartAttemptInput = Parameters<typeof startAttempt>[1];

/** A launched attempt whose executor's scheduler may still hold it (MonitorStore.launchedAttempts). */
export interface LaunchedAttempt {
  jobId: number;
  executor: string;
  /** AttemptHandle.ref (the Slurm job id). */
  ref: string;
  /** The job's Job.pendingReason now. */
  pendingReason: string | null;
}

/** What the fence of a write is taken from: the job as the step read it. */
export type LeaseOf = Pick<Job, 'id' | 'leaseEpoch'>;

/** A job the reconcile pass follows: its id, and whether a cancel of it is under way. */
export interface ActiveJob {
  id: number;
  cancel: boolean;
}

/** The monitor's view of the database (see the module comment). */
export interface MonitorStore {
  /** The job with its tasks (by index) and each task's latest attempt; null when gone. Fault site 'job'. */
  readJob(id: number): Promise<JobRow | null>;
  /**
   * Non-terminal jobs that are admitted or have a cancel request, ascending by id; `cancel` when
   * the job is CANCELLING or has a cancel request (the reconcile pass steps those every time).
   * Fault site 'scan'.
   */
  activeJobIds(): Promise<ActiveJob[]>;
  /** CPUs held per executor and queue (active jobs) and a summary of each line (PENDING, no cancel request). Fault site 'admission'. */
  queueGroups(): Promise<QueueGroup[]>;
  /** The operator queues' limits (the Queue table), by name. */
  queueLimits(): Promise<Record<string, QueueLimits>>;
  /**
   * The users' running-CPU quotas — User.maxRunningCpus, else their role's default in `defaults`
   * (lib/jobs/quotas.ts) — and the CPUs their active jobs hold; empty when no user has one.
   */
  userQuotas(defaults: RoleQuotas): Promise<{ quotas: Record<number, UserQuota>; used: Record<number, number> }>;
  /** lib/store setPendingReasons(): why each of these jobs (PENDING, or in `statuses`) waits (written where it changed). */
  setPendingReasons(rows: ReadonlyArray<{ id: number; reason: string | null }>, statuses?: readonly JobStatus[]): Promise<number[]>;
  /**
   * The launched attempts of these executors (STARTING / RUNNING, with a ref) of jobs that are
   * STARTING or RUNNING: each with its job's stored reason. Through the index Attempt(status).
   * Fault site 'held'.
   */
  launchedAttempts(executors: readonly string[]): Promise<LaunchedAttempt[]>;
  /** lib/store clearPendingReasons(): clears the reason of every PENDING job but `keep`. */
  clearPendingReasons(keep: readonly number[]): Promise<number[]>;
  /** CPUs and executor of those of `jobIds` that are no longer active (their leftovers are being stopped). */
  inactiveCpus(jobIds: number[]): Promise<Array<{ cpus: number; executor: string }>>;
  /** Every waiting job of the executor, by id. */
  waitingAll(executor: string): Promise<WaitingRow[]>;
  /** Up to `take` waiting jobs of the executor in line order (priority desc, id asc); see LinePage. */
  waitingPage(executor: string, page: LinePage): Promise<WaitingRow[]>;
  /** Waiting jobs of the executor with more CPUs than `cpusAbove` or submitted at or before `submittedAtOrBefore` (ms). */
  waitingMatching(executor: string, m: { cpusAbove: number | null; nodesAbove?: number | null; submittedAtOrBefore: number | null }): Promise<WaitingRow[]>;
  /**
   * lib/store transitionMany(): one guarded, all-or-nothing decision about `job`. With leases
   * (docs/design.md "Replicas"), fenced by the lease the step read (`job.leaseEpoch`): a write
   * of a job another server took over comes back `lost: gone`, `fenced`.
   */
  transitionMany(tr: AnyTransition[], job: LeaseOf): Promise<BatchOutcome>;
  /** lib/store startAttempt(): a task's new attempt with the decision's other writes; fenced as transitionMany(). */
  startAttempt(a: StartAttemptInput, job: LeaseOf): Promise<TransitionOutcome<Attempt>>;
  /** This server's id when jobs are owned by lease (null: one server, no leases). */
  readonly owner: string | null;
  /** The host's admission across servers when jobs are owned by lease (null: one server). */
  readonly host: HostAdmission | null;
  /** The store itself, for the operator view's reads (lib/store lease.ts). */
  readonly raw: Store;
  /** lib/store usageTargets(): the live attempts with a handle (a sampling round's). */
  usageTargets(): Promise<UsageTarget[]>;
  /** lib/store storedUsage(): peaks and series length of attempts first seen by this monitor. */
  storedUsage(ids: readonly number[]): Promise<StoredUsage[]>;
  /** lib/store usageSeries(): one attempt's stored series (to halve it). */
  usageSeries(attemptId: number): Promise<UsagePoint[] | null>;
  /** lib/store recordUsage(): a sampling round's write, one statement. */
  recordUsage(rows: readonly UsageWrite[], at: Date): Promise<number>;
  /** The store's bus: the writes of this process, the monitor's own included, after commit. */
  readonly bus: StoreBus;
  /** The store's submit statements so far (lib/store submitStatementStats). */
  submitStats(): SubmitStatementStats;
  /** The webhook dispatcher's statements (lib/store webhook-deliveries.ts, webhook-subscriptions.ts). */
  readonly webhooks: WebhookStatements;
  /** The retention pass's statements (lib/store retention.ts). */
  readonly retention: RetentionStatements;
  /** The log compressor's statements (lib/store log-compress.ts). */
  readonly compress: CompressStatements;
}

/** The statements of the log compressor (lib/monitor/compress.ts), as lib/store has them. */
export interface CompressStatements {
  candidates(o: { endedBefore: Date; limit: number; after?: { endedAt: Date; id: number } }): Promise<CompressCandidate[]>;
  record(attemptIds: readonly number[], at: Date): Promise<Array<{ id: number; logsRemoved: boolean }>>;
}

/**
 * Admission shared by the servers of one host (docs/design.md "Replicas", capacity): lib/store
 * withHostLock() and hostCpus() for this server's host identity.
 */
export interface HostAdmission {
  /** Runs `fn` under the host's admission lock (one pass of the host's servers at a time). */
  lock<T>(fn: () => Promise<T>): Promise<T>;
  /** CPUs held on this host by the active jobs of `executors`, by executor. */
  cpus(executors: readonly string[]): Promise<Record<string, number>>;
}

/** The statements of the retention system (lib/monitor/retention.ts), as lib/store has them. */
export interface RetentionStatements {
  expiredLogs(o: { now: Date; logsDays: number | null; limit: number }): Promise<RetentionJob[]>;
  oldestWithLogs(o: { limit: number; after?: { endedAt: Date; id: number } }): Promise<RetentionJob[]>;
  pastRetention(o: { now: Date; jobsDays: number | null; limit: number }): Promise<number[]>;
  recordLogsRemoved(removed: readonly LogsRemoved[], at: Date): Promise<number[]>;
  /** Deletes these finished jobs' rows and audits them with their folders' bytes (lib/store deleteJobsPastRetention). */
  deleteJobs(ids: number[], folderBytes: ReadonlyMap<number, number>): Promise<number[]>;
  /** Audits stored uploads a pass removed (lib/store recordUploadsRemoved). */
  uploadsRemoved(hashes: readonly string[], bytes: number): Promise<void>;
  /** Which of these upload hashes a job's launch still names (lib/store referencedUploads). */
  referencedUploads(hashes: readonly string[]): Promise<Set<string>>;
}

/** The webhook dispatcher's statements, on the monitor's store (lib/store webhook-deliveries.ts). */
export interface WebhookStatements {
  claim(o: { limit: number; leaseMs: number; now: Date; token: string }): Promise<ClaimedDelivery[]>;
  nextDue(): Promise<Date | null>;
  subscriptions(ids: number[]): Promise<WebhookSubscription[]>;
  delivered(id: string, token: string, r: DeliveryResult, at: Date): Promise<boolean>;
  retry(id: string, token: string, r: DeliveryResult, next: Date): Promise<boolean>;
  gaveUp(id: string, token: string, r: DeliveryResult, reason: string): Promise<boolean>;
}

const JOB_INCLUDE = {
  tasks: { orderBy: { index: 'asc' }, include: { attempts: { orderBy: { number: 'desc' }, take: 1 } } },
} satisfies Prisma.JobInclude;

const WAITING_SELECT = { id: true, cpus: true, nodes: true, executor: true, submittedAt: true, priority: true, queue: true, pendingReason: true, userId: true } as const;

/** Line order (lib/jobs/capacity lineOrder), as the index Job(status, executor, priority desc, id) reads it. */
const LINE_ORDER = [{ priority: 'desc' }, { id: 'asc' }] satisfies Prisma.JobOrderByWithRelationInput[];

/** A waiting job as admission reads it: what the plan takes, and the reason stored now. */
export type WaitingRow = WaitingJob & { pendingReason: string | null };

function toWaiting(r: { id: number; cpus: number; nodes: number; executor: string; submittedAt: Date; priority: number; queue: string; pendingReason: string | null; userId: number | null }): WaitingRow {
  return { id: r.id, cpus: r.cpus, ...(r.nodes > 1 ? { nodes: r.nodes } : {}), executor: r.executor, submittedAtMs: r.submittedAt.getTime(), priority: r.priority, queue: r.queue, pendingReason: r.pendingReason, ...(r.userId !== null ? { userId: r.userId } : {}) };
}

/** MonitorStore.userQuotas(): two queries, one when no user has a quota. */
async function userQuotas(db: PrismaClient, defaults: RoleQuotas): Promise<{ quotas: Record<number, UserQuota>; used: Record<number, number> }> {
  const defaulted = QUOTA_ROLES.filter((r) => defaults[r]?.maxRunningCpus != null);
  const rows = await db.user.findMany({
    where: { OR: [{ maxRunningCpus: { not: null } }, ...(defaulted.length ? [{ role: { in: [...defaulted] } }] : [])] },
    select: { id: true, name: true, role: true, maxRunningCpus: true },
  });
  const quotas: Record<number, UserQuota> = {};
  for (const r of rows) {
    const q = effectiveQuota({ role: isRole(r.role) ? r.role : 'viewer', maxPendingJobs: null, maxRunningCpus: r.maxRunningCpus }, 'maxRunningCpus', defaults);
    if (q.value !== null) quotas[r.id] = { name: r.name, maxCpus: q.value, ...(q.source === 'role' ? { roleDefault: r.role } : {}) };
  }
  const ids = Object.keys(quotas).map(Number);
  if (ids.length === 0) return { quotas: {}, used: {} };
  const groups = await db.job.groupBy({ by: ['userId'], where: { userId: { in: ids }, status: { in: [...ACTIVE_JOB_STATUSES] } }, _sum: { cpus: true } });
  return { quotas, used: Object.fromEntries(groups.filter((g) => g.userId !== null).map((g) => [g.userId!, g._sum.cpus ?? 0])) };
}

function waitingWhere(executor: string) {
  return { status: 'PENDING' as const, cancelRequestedAt: null, executor };
}

/**
 * The monitor's view of `store`: writes through it, reads through `db`, failing as `faults` says.
 * `owner` (this server's id, leases on): the scan answers only the jobs it owns and every write
 * carries the fence; `hostId` (its host identity, leases on): admission is shared with the
 * host's other servers (`host`).
 */
export function monitorStore(store: Store, db: PrismaClient, faults: Faults, owner: string | null = null, hostId: string | null = null): MonitorStore {
  const fence = (job: LeaseOf): Fence | undefined => (owner === null ? undefined : { jobId: job.id, ownerId: owner, epoch: job.leaseEpoch });
  const host: HostAdmission | null =
    owner === null || hostId === null
      ? null
      : {
          lock: (fn) => withHostLock(store, hostId, HOST_LOCK_MS, fn),
          cpus: (executors) => hostCpus(store, hostId, executors),
        };
  return {
    owner,
    host,
    raw: store,
    async readJob(id) {
      faults.consume('job');
      return db.job.findUnique({ where: { id }, include: JOB_INCLUDE });
    },
    async activeJobIds() {
      faults.consume('scan');
      const rows = await db.job.findMany({
        where: {
          status: { notIn: [...JOB_TERMINAL] },
          OR: [{ status: { not: 'PENDING' } }, { cancelRequestedAt: { not: null } }],
          ...(owner === null ? {} : { ownerId: owner }),
        },
        select: { id: true, status: true, cancelRequestedAt: true },
        orderBy: { id: 'asc' },
      });
      return rows.map((r) => ({ id: r.id, cancel: r.status === 'CANCELLING' || r.cancelRequestedAt !== null }));
    },
    async queueGroups() {
      faults.consume('admission');
      const groups = await db.job.groupBy({
        by: ['executor', 'queue', 'status'],
        where: { OR: [{ status: { in: [...ACTIVE_JOB_STATUSES] } }, { status: 'PENDING', cancelRequestedAt: null }] },
        _sum: { cpus: true },
        _count: { _all: true },
        _min: { cpus: true, submittedAt: true },
        _max: { cpus: true, nodes: true },
      });
      return groups.map((g) => ({
        executor: g.executor,
        queue: g.queue,
        status: g.status,
        count: g._count._all,
        sumCpus: g._sum.cpus ?? 0,
        minCpus: g._min.cpus ?? 0,
        maxCpus: g._max.cpus ?? 0,
        maxNodes: g._max.nodes ?? 1,
        oldestSubmittedAtMs: g._min.submittedAt?.getTime() ?? 0,
      }));
    },
    async queueLimits() {
      const rows = await db.queue.findMany({ select: { name: true, maxRunning: true, maxCpus: true } });
      return Object.fromEntries(rows.map((r) => [r.name, { maxRunning: r.maxRunning, maxCpus: r.maxCpus }]));
    },
    userQuotas: (defaults) => userQuotas(db, defaults),
    inactiveCpus(jobIds) {
      return db.job.findMany({
        where: { id: { in: jobIds }, status: { notIn: [...ACTIVE_JOB_STATUSES] } },
        select: { cpus: true, executor: true },
      });
    },
    async waitingAll(executor) {
      return (await db.job.findMany({ where: waitingWhere(executor), select: WAITING_SELECT, orderBy: LINE_ORDER })).map(toWaiting);
    },
    async waitingPage(executor, { after, take, skipQueues = [], queue }) {
      // `priority <= p` bounds the index range; the OR keeps FIFO order within p.
      const where: Prisma.JobWhereInput = {
        ...waitingWhere(executor),
        ...(after ? { priority: { lte: after.priority }, OR: [{ priority: { lt: after.priority } }, { id: { gt: after.id } }] } : {}),
        ...(queue !== undefined ? { queue } : skipQueues.length ? { queue: { notIn: [...skipQueues] } } : {}),
      };
      return (await db.job.findMany({ where, select: WAITING_SELECT, orderBy: LINE_ORDER, take })).map(toWaiting);
    },
    async waitingMatching(executor, m) {
      const also: Prisma.JobWhereInput[] = [];
      if (m.cpusAbove !== null) also.push({ cpus: { gt: m.cpusAbove } });
      if (m.nodesAbove != null) also.push({ nodes: { gt: m.nodesAbove } });
      if (m.submittedAtOrBefore !== null) also.push({ submittedAt: { lte: new Date(m.submittedAtOrBefore) } });
      if (also.length === 0) return [];
      const where = { ...waitingWhere(executor), OR: also };
      return (await db.job.findMany({ where, select: WAITING_SELECT, orderBy: LINE_ORDER })).map(toWaiting);
    },
    setPendingReasons: (rows, statuses) => setPendingReasons(store, rows, statuses),
    async launchedAttempts(executors) {
      faults.consume('held');
      const rows = await db.attempt.findMany({
        where: { status: { in: ['STARTING', 'RUNNING'] }, executor: { in: [...executors] }, executorRef: { not: null }, task: { job: { status: { in: ['STARTING', 'RUNNING'] } } } },
        select: { jobId: true, executor: true, executorRef: true, task: { select: { job: { select: { pendingReason: true } } } } },
        orderBy: { id: 'asc' },
      });
      return rows.map((r) => ({ jobId: r.jobId, executor: r.executor, ref: r.executorRef!, pendingReason: r.task.job.pendingReason }));
    },
    clearPendingReasons: (keep) => clearPendingReasons(store, keep),
    transitionMany: (tr, job) => transitionMany(store, tr, fence(job)),
    startAttempt: (a, job) => startAttempt(store, a, fence(job)),
    usageTargets: () => usageTargets(store),
    storedUsage: (ids) => storedUsage(store, ids),
    usageSeries: (id) => usageSeries(store, id),
    recordUsage: (rows, at) => recordUsage(store, rows, at),
    bus: store.bus,
    submitStats: () => submitStatementStats(store),
    retention: retentionStatements(store),
    compress: { candidates: (o) => attemptsToCompress(store, o), record: (ids, at) => recordLogsCompressed(store, ids, at) },
    webhooks: {
      claim: (o) => claimDeliveries(store, o),
      nextDue: () => nextDeliveryDue(store),
      subscriptions: (ids) => subscriptionsById(store, ids),
      delivered: (id, token, r, at) => recordDelivered(store, id, token, r, at),
      retry: (id, token, r, next) => recordRetry(store, id, token, r, next),
      gaveUp: (id, token, r, reason) => recordGaveUp(store, id, token, r, reason),
    },
  };
}

/** The retention system's statements on a store (lib/store retention.ts). */
function retentionStatements(store: Store): RetentionStatements {
  return {
    expiredLogs: (o) => jobsWithExpiredLogs(store, o),
    oldestWithLogs: (o) => oldestJobsWithLogs(store, o),
    pastRetention: (o) => jobsPastRetention(store, o),
    recordLogsRemoved: (r, at) => recordLogsRemoved(store, r, at),
    deleteJobs: (ids, bytes) => deleteJobsPastRetention(store, ids, bytes),
    uploadsRemoved: (hashes, bytes) => recordUploadsRemoved(store, hashes, bytes),
    referencedUploads: (hashes) => referencedUploads(store, hashes),
  };
}
