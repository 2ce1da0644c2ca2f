import type { ApiToken, PrismaClient } from '../generated/prisma/client';
import type { QueueLimits } from '../jobs/capacity';
import type { GpuGrant } from '../jobs/gpus';
import type { RoleQuotas } from '../jobs/quotas';
import type { JobStatus } from '../jobs/status';
import type { UsagePoint } from '../jobs/usage';
import type { AfterMode } from '../jobs/spec/flow';
import {
  dependencyStates,
  dependentsToDecide,
  markDependenciesMet,
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
  extendClaims,
  nextDeliveryDue,
  recordDelivered,
  recordGaveUp,
  recordRetry,
  releaseClaims,
  subscriptionsById,
  type ClaimedDelivery,
  type Delivered,
  type DeliveryResult,
  hostCpus,
  heldGpuGrants,
  withHostLock,
  clearPendingReasons,
  recordUsage,
  vacuumUsageTables,
  setNextAttemptAt,
  setPendingReasons,
  type PendingReasonRow,
  storedUsage,
  usageSeries,
  usageTargets,
  type StoredUsage,
  type UsageTarget,
  type UsageWrite,
  startAttempt,
  createAttemptToken,
  recordAttemptAccount,
  userRow,
  recordAttemptNodes,
  submitStatementStats,
  transitionMany,
  followedJobs,
  inactiveCpus,
  launchedAttempts,
  queueGroups,
  foldStatusDeltas,
  queueLimits,
  readingThrough,
  stepJob,
  userQuotas,
  type UserQuotaRead,
  waitingAll,
  waitingMatching,
  waitingPage,
  type AnyTransition,
  type FollowedJob,
  type Fence,
  type BatchOutcome,
  type LaunchedAttempt,
  type LineMatch,
  type LinePage,
  type QueueGroup,
  type Store,
  type StoreBus,
  type SubmitStatementStats,
  type TransitionOutcome,
  type WaitingRow,
} from '../store';
import type { WebhookSubscription } from '../generated/prisma/client';
import { TransientDatabaseError } from './errors';
import type { Attempt, Job } from '../generated/prisma/client';
import type { FaultSite, JobRow } from './types';

/** Longest hold of the host's admission lock (ms): a pass with its launches takes far less. */
const HOST_LOCK_MS = 30_000;

/**
 * The monitor's view of the store: every database statement the monitor makes, in one
 * interface — the guarded writes of the store (docs/design.md §4) and the reads the loop and
 * admission need, all of them lib/store functions. Reads go through the fault injection
 * (failNextRead) so a test can fail exactly one of them.
 */

export type { AnyTransition, BatchOutcome, LaunchedAttempt, LinePage, LinePlace, PendingReasonRow, QueueGroup, StoreEvent, Transition, TransitionOutcome, UserQuotaRead, WaitingRow } from '../store';


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

/** What startAttempt() takes (lib/store). */
export type StartAttemptInput = Parameters<typeof startAttempt>[1];

/** What the fence of a write is taken from: the job as the step read it. */
export type LeaseOf = Pick<Job, 'id' | 'leaseEpoch'>;

/** A job the reconcile pass follows: its id, and whether a cancel of it is under way (lib/store reconcile.ts). */
export type ActiveJob = FollowedJob;

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
  /** CPUs and GPUs held per executor and queue (active jobs) and a summary of each line (PENDING, no cancel request). Fault site 'admission'. */
  queueGroups(): Promise<QueueGroup[]>;
  /** The operator queues' limits (the Queue table), by name. */
  queueLimits(): Promise<Record<string, QueueLimits>>;
  /**
   * The users' running quotas — User.maxRunningCpus / maxRunningGpus, else their role's defaults
   * in `defaults` (lib/jobs/quotas.ts) — and the CPUs and GPUs their active jobs hold; empty when
   * no user has one.
   */
  userQuotas(defaults: RoleQuotas): Promise<UserQuotaRead>;
  /**
   * lib/store heldGpuGrants(): the device grants of `executor`'s jobs that hold GPUs (active, or
   * among `alsoJobIds`: leftovers being stopped); with leases on, this host's only.
   */
  gpuGrants(executor: string, alsoJobIds: readonly number[]): Promise<GpuGrant[]>;
  /** lib/store setPendingReasons(): why each of these jobs (PENDING, or in `statuses`) waits (written where it changed). */
  setPendingReasons(rows: readonly PendingReasonRow[], statuses?: readonly JobStatus[]): Promise<number[]>;
  /** lib/store setNextAttemptAt(): when job `id`'s next attempt starts (a restart's backoff), written where it changed; true when written. */
  setNextAttemptAt(id: number, at: Date | null): Promise<boolean>;
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
  waitingMatching(executor: string, m: LineMatch): Promise<WaitingRow[]>;
  /**
   * lib/store transitionMany(): one guarded, all-or-nothing decision about `job`. With leases
   * (docs/design.md "Replicas"), fenced by the lease the step read (`job.leaseEpoch`): a write
   * of a job another server took over comes back `lost: gone`, `fenced`.
   */
  transitionMany(tr: AnyTransition[], job: LeaseOf): Promise<BatchOutcome>;
  /** lib/store startAttempt(): a task's new attempt with the decision's other writes; fenced as transitionMany(). */
  startAttempt(a: StartAttemptInput, job: LeaseOf): Promise<TransitionOutcome<Attempt>>;
  /** lib/store recordAttemptNodes(): where an attempt runs, once known (not a status write). */
  recordAttemptNodes(jobId: number, attemptId: number, nodes: readonly string[]): Promise<boolean>;
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
  /** lib/store vacuumUsageTables(): on PGlite, VACUUMs the tables the rounds rewrite when due; the tables vacuumed. */
  vacuumUsageTables(): Promise<string[]>;
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
  /** As whom an attempt runs, and its token (lib/monitor/run-as.ts; lib/store users.ts, attempt.ts). */
  readonly accounts: AccountStatements;
  /** The dependency system's statements (lib/store dependencies.ts). */
  readonly deps: DependencyStatements;
}

/** The statements of lib/monitor/run-as.ts, as lib/store has them. */
export interface AccountStatements {
  /** The submitter: its name and OS account (User.osUser); null when gone. */
  user(id: number): Promise<{ id: number; name: string; osUser: string | null } | null>;
  /** lib/store recordAttemptAccount(): the account an attempt runs as. */
  recordAccount(attemptId: number, osUser: string): Promise<void>;
  /** lib/store createAttemptToken(): the attempt's own token (null: none). */
  attemptToken(t: Parameters<typeof createAttemptToken>[1]): Promise<ApiToken | null>;
}

/** The statements of the dependency system (lib/monitor/dependencies.ts), as lib/store has them. */
export interface DependencyStatements {
  /** A dependent's edges with the statuses they wait on. Fault site 'job'. */
  states(jobId: number): Promise<Array<{ onJobId: number; after: AfterMode; status: string | null }>>;
  /** This server's waiting dependents with something to decide (of `onJobIds`, or any: the sweep). */
  toDecide(onJobIds: readonly number[] | null): Promise<number[]>;
  /** Lets a dependent join its executor's line (announced: a pass takes it). */
  met(jobId: number, at: Date): Promise<boolean>;
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
  claim(o: { limit: number; run: number; leaseMs: number; now: Date; token: string }): Promise<ClaimedDelivery[]>;
  extend(ids: readonly string[], token: string, until: Date): Promise<number>;
  release(ids: readonly string[], token: string): Promise<void>;
  nextDue(): Promise<Date | null>;
  subscriptions(ids: number[]): Promise<WebhookSubscription[]>;
  delivered(done: readonly Delivered[]): Promise<string[]>;
  retry(id: string, token: string, r: DeliveryResult, next: Date): Promise<boolean>;
  gaveUp(id: string, token: string, r: DeliveryResult, reason: string): Promise<boolean>;
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
  const reads = readingThrough(store, db);
  return {
    owner,
    host,
    raw: store,
    async readJob(id) {
      faults.consume('job');
      return stepJob(reads, id);
    },
    async activeJobIds() {
      faults.consume('scan');
      return followedJobs(reads, owner);
    },
    async queueGroups() {
      faults.consume('admission');
      return queueGroups(reads, () => foldStatusDeltas(store));
    },
    queueLimits: () => queueLimits(reads),
    userQuotas: (defaults) => userQuotas(reads, defaults),
    gpuGrants: (executor, alsoJobIds) => heldGpuGrants(reads, executor, { hostId: host ? hostId : null, alsoJobIds }),
    inactiveCpus: (jobIds) => inactiveCpus(reads, jobIds),
    waitingAll: (executor) => waitingAll(reads, executor),
    waitingPage: (executor, page) => waitingPage(reads, executor, page),
    waitingMatching: (executor, m) => waitingMatching(reads, executor, m),
    setPendingReasons: (rows, statuses) => setPendingReasons(store, rows, statuses),
    setNextAttemptAt: (id, at) => setNextAttemptAt(store, id, at),
    async launchedAttempts(executors) {
      faults.consume('held');
      return launchedAttempts(reads, executors);
    },
    clearPendingReasons: (keep) => clearPendingReasons(store, keep),
    transitionMany: (tr, job) => transitionMany(store, tr, fence(job)),
    startAttempt: (a, job) => startAttempt(store, a, fence(job)),
    recordAttemptNodes: (jobId, attemptId, nodes) => recordAttemptNodes(store, jobId, attemptId, nodes),
    usageTargets: () => usageTargets(store),
    storedUsage: (ids) => storedUsage(store, ids),
    usageSeries: (id) => usageSeries(store, id),
    recordUsage: (rows, at) => recordUsage(store, rows, at),
    vacuumUsageTables: () => vacuumUsageTables(store),
    bus: store.bus,
    submitStats: () => submitStatementStats(store),
    retention: retentionStatements(store),
    compress: { candidates: (o) => attemptsToCompress(store, o), record: (ids, at) => recordLogsCompressed(store, ids, at) },
    accounts: {
      user: (id) => userRow(reads, { id }),
      recordAccount: (attemptId, osUser) => recordAttemptAccount(store, attemptId, osUser),
      attemptToken: (t) => createAttemptToken(store, t),
    },
    deps: {
      async states(jobId) {
        faults.consume('job');
        return dependencyStates(reads, jobId);
      },
      toDecide: (onJobIds) => dependentsToDecide(reads, onJobIds, owner),
      met: (jobId, at) => markDependenciesMet(store, jobId, at),
    },
    webhooks: {
      claim: (o) => claimDeliveries(store, o),
      extend: (ids, token, until) => extendClaims(store, ids, token, until),
      release: (ids, token) => releaseClaims(store, ids, token),
      nextDue: () => nextDeliveryDue(store),
      subscriptions: (ids) => subscriptionsById(store, ids),
      delivered: (done) => recordDelivered(store, done),
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
