/**
 * lib/store: every database statement of jobdeck's jobs, one family per file — the handle
 * (handle.ts), the bus (bus.ts), the column table (columns.ts), parameters and decoding (sql.ts),
 * the guarded write (transition.ts), starting an attempt (attempt.ts), submitting (submit.ts,
 * submit-queue.ts), set writes of a cancel (cancel.ts), a PENDING job's scheduling fields
 * (pending.ts), the operator queues (queues.ts), deletes (delete.ts), the server's own
 * history entries (server-event.ts), servers and job leases (lease.ts), the NOTIFY across
 * servers (notify.ts), the webhook outbox
 * (outbox.ts: its INSERT inside the guarded write; webhook-subscriptions.ts,
 * webhook-deliveries.ts), resource usage per attempt (usage.ts), GPU grants and GPU-seconds (gpus.ts), the charts' aggregates
 * (insights.ts), log compression (log-compress.ts), the status counts (status-counts.ts) and the reads
 * (list.ts, detail.ts, lookup.ts, log-attempt.ts, job-logs.ts, job-events.ts; the monitor's:
 * reconcile.ts, waiting-line.ts, cpu-use.ts). Nothing outside lib/store and lib/db uses a Prisma
 * model (checked by `npm run lint`). Reads answer rows; lib/api maps them to the API's views.
 */
export { SQL_NULL } from './sql';
export { createStore, inTransaction, readingThrough, type Store, type StoreScope, type StoreTx } from './handle';
export { StoreBus, type StoreEvent, type StoreListener } from './bus';
export type { Column, ColumnTable, ColumnType, ModelColumns } from './columns';
export {
  transition,
  transitionAttempt,
  transitionJob,
  transitionMany,
  transitionTask,
  type AnyTransition,
  type BatchOutcome,
  type Fence,
  type NewAttempt,
  type Transition,
  type TransitionOutcome,
} from './transition';
export { recordAttemptAccount, startAttempt } from './attempt';
export { recordAttemptNodes } from './attempt-nodes';
export { claimJobs, expireServers, hostCpus, hostServers, jobOwners, liveServers, withHostLock, registerServer, releaseLeases, renewLeases, type Claimed, type Renewal, type LiveServer, type ServerInfo } from './lease';
export { QueueGoneError, SUBMIT_BATCH_MAX, SUBMIT_IN_FLIGHT, submitJob, submitStatementStats, type NewJob, type NewTask, type SubmitStatementStats } from './submit';
export { recordCancelRequest, transitionJobsWhere, type JobsWhere } from './cancel';
export { deleteTerminalJobs, leftoverAttempts, type LeftoverAttempt } from './delete';
export { jobListRows } from './list-rows';
export { activeJobIds, jobFilterWhere, userNames, jobStatusCounts, likeLiteral, LIST_SORTS, listJobRows, MAX_JOB_ID, type JobFilter, type JobListRow, type JobSummaryRow, type ListJobsOptions, type ListSort, type StatusCounts } from './list';
export { jobTree, type JobTree } from './detail';
export { createdJobs, jobBySubmissionId, jobExists, jobLogsRemovedAt, jobQueueOf, jobStatuses, jobSubmission, jobSubmitters, jobWithTasks, pendingJobsOf } from './lookup';
export { jobEventsAfter, jobEventsByIds } from './job-events';
export { notifyChannel } from './notify';
export { followedJobs, stepJob, type FollowedJob, type StepJob } from './reconcile';
export { waitingAll, waitingMatching, waitingPage, type LineMatch, type LinePage, type LinePlace, type WaitingRow } from './waiting-line';
export { inactiveCpus, queueGroups, userQuotas, type QueueGroup, type UserQuotaRead } from './cpu-use';
export { logSearchTargets, type LogSearchTarget } from './log-search';
export { allJobStatusCounts, foldStatusDeltas, FOLD_ABOVE } from './status-counts';
export { deleteJobsPastRetention, jobsPastRetention, jobsWithExpiredLogs, oldestJobsWithLogs, recordLogsRemoved, recordUploadsRemoved, referencedUploads, type LogsRemoved, type RetentionJob } from './retention';
export { lastServerStops, recordServerEvents, SERVER_EVENTS, type ServerEvent } from './server-event';
export { clearPendingReasons, launchedAttempts, setNextAttemptAt, setPendingPriority, setPendingReasons, type LaunchedAttempt, type PendingReasonRow, type PriorityWrite } from './pending';
export { cachedQueueRows, deleteQueue, listQueueRows, QUEUE_CACHE_MS, putQueue, queueLimits, queueRow, queueUse, type QueueDelete, type QueueSettings } from './queues';
export { attemptOf, findLogAttempt, restartOrdinal, type LogAttemptLookup, type LogTarget } from './log-attempt';
export { outboxInsert, WEBHOOK_EVENTS, type WebhookEvent } from './outbox';
export { countSubscriptions, createSubscription, deleteSubscription, listSubscriptions, subscriptionRow, subscriptionsById, updateSubscription, type NewSubscription, type SubscriptionPatch } from './webhook-subscriptions';
export {
  claimDeliveries,
  extendClaims,
  insertTestDelivery,
  jobNotifications,
  listDeliveries,
  nextDeliveryDue,
  recordDelivered,
  recordGaveUp,
  recordRetry,
  redeliver,
  releaseClaims,
  type ClaimedDelivery,
  type Delivered,
  type DeliveryLogRow,
  type DeliveryResult,
} from './webhook-deliveries';
export { readJobLogs, type JobLogAttempt, type JobLogs } from './job-logs';
export { attemptsToCompress, recordLogsCompressed, type CompressCandidate } from './log-compress';
export { recordUsage, storedUsage, usageSeries, usageSeriesOf, usageTargets, vacuumDue, vacuumUsageTables, USAGE_TABLES, type StoredUsage, type UsageTarget, type UsageWrite } from './usage';
export { gpuSecondsByUser, heldGpuGrants, type GpuSecondsRow } from './gpus';
export { insightRows, type BusyNameRow, type InsightRows, type PercentileRow, type ThroughputRow } from './insights';
export { countLiveTokens, createAttemptToken, createToken, createUser, directoryRows, FIRST_ADMIN_ID, listTokens, listUsers, liveTokenIds, liveTokenSet, liveTokensById, MAX_TOKENS_PER_USER, revokeTokenRow, tokenRow, touchToken, updateUser, userRow, type NewToken, type UserFields } from './users';
export { appendAudit, AUDIT_ACTIONS, AUDIT_MAX_IDS, listAudit, SERVER_ACTOR, type AuditAction, type AuditEntry, type AuditFilter } from './audit';
export { recordUploadOwner, uploadsSentBy } from './uploads';
export { dependenciesOf, dependencyStates, dependencyTargets, dependentsToDecide, markDependenciesMet, type DependencyTarget, type NamedTarget } from './dependencies';
export { deleteGroupRow, groupJobIds, groupLeadJobs, groupRow, groupRows, groupSlots, groupStatusCounts, listGroupRows, submitGroup, type GroupSlot, type NewGroup } from './groups';
export { createScheduleRow, deleteScheduleRow, dueSchedules, listScheduleRows, liveScheduleJobs, scheduleFires, scheduleRow, soonestFire, updateScheduleRow, writeFire, type FireOutcome, type FireWrite, type ScheduleFields } from './schedules';
