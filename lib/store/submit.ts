import type { Job, JobEvent, Task } from '../generated/prisma/client';
import { logger } from '../log';
import { uniqueViolationAsP2002 } from './sql';
import type { Store } from './handle';
import { newJobEntry, type InsertedIds, type JobEntry, type NewJob, type SubmitStatementStats } from './submit-queue';

export { newJobEntry, QueueGoneError, SUBMIT_BATCH_MAX, SUBMIT_IN_FLIGHT, type NewJob, type NewTask, type SubmitStatementStats } from './submit-queue';

/**
 * Creates a job in PENDING with its tasks (PENDING) and the first JobEvent ("submitted"), then
 * announces `created` on the store's bus. The only place a job row is created.
 *
 * One SQL statement (data-modifying CTEs) writes the three tables and answers only the new ids;
 * the returned rows are built from the input and those ids, typed as the Prisma models so a new
 * column cannot be forgotten, and equal what a read would answer (JSON as stored). One
 * `new Date()` (ms) taken at the call is submittedAt, updatedAt and the event's `at`.
 *
 * Group commit (submit-queue.ts): while SUBMIT_IN_FLIGHT statements run, further submits go
 * together, up to SUBMIT_BATCH_MAX jobs per statement — no added latency when idle, fewer
 * commits under a burst (docs/design.md §4; bench/README.md). Each job stays all-or-nothing: a
 * batch PostgreSQL refuses for its data (SQLSTATE class 22/23) is sent again job by job, in call
 * order, so only the refused job fails; any other error is every caller's, as it would have been
 * alone. Ids follow the order of the calls.
 *
 * @returns the job with its tasks in index order.
 * @throws QueueGoneError when the job's named queue's row is gone (nothing written);
 *   Error when `tasks` is empty; Prisma's P2002 PrismaClientKnownRequestError (meta.target
 *   ['submissionId']) when `submissionId` is already taken — nothing was written (callers answer
 *   idempotently); other database errors as Prisma raises them.
 */
export async function submitJob(store: Store, job: NewJob): Promise<Job & { tasks: Task[] }> {
  if (job.tasks.length === 0) throw new Error('a job needs at least one task');
  const entry = newJobEntry(job);
  let ids: InsertedIds;
  try {
    ids = await store.submits.add(entry);
  } catch (err) {
    throw uniqueViolationAsP2002(err);
  }
  return announceNewJob(store, entry, ids);
}

/**
 * How the store's submit group commit went so far: submit statements sent and the jobs they
 * carried (refused batches and their job-by-job retries included); jobs ÷ statements is the mean
 * batch. Zeros before the first submit.
 */
export function submitStatementStats(store: Store): SubmitStatementStats {
  return store.submits.stats();
}

/** The stored rows of a written job (from its input and ids), logged and announced as `created`. */
export function announceNewJob(store: Store, e: JobEntry, ids: InsertedIds): Job & { tasks: Task[] } {
  const { job, now } = e;
  const row: Job = {
    id: ids.jobId,
    submissionId: e.submissionId,
    name: job.name,
    status: 'PENDING',
    statusReason: null,
    pendingReason: e.pendingReason,
    pendingPlace: null,
    specYaml: job.specYaml,
    spec: JSON.parse(e.specJson),
    specHash: job.specHash,
    cpus: job.cpus,
    nodes: job.nodes ?? 1,
    gpus: job.gpus ?? 0,
    gpuRequest: e.gpuRequestJson === null ? null : JSON.parse(e.gpuRequestJson),
    gpuGrant: null,
    priority: job.priority ?? 500,
    queue: job.queue ?? 'default',
    metadata: e.metadataJson === null ? null : JSON.parse(e.metadataJson),
    // What the database generates for the row (never written: docs/design.md "Search").
    metadataSet: e.metadataJson === null ? null : [JSON.parse(e.metadataJson)],
    launch: e.launchJson === null ? null : JSON.parse(e.launchJson),
    warnings: e.warningsJson === null ? null : JSON.parse(e.warningsJson),
    labels: e.labelsJson === null ? null : JSON.parse(e.labelsJson),
    origin: e.origin,
    executor: e.executor,
    submittedAt: now,
    startedAt: null,
    endedAt: null,
    ownerId: null,
    leaseEpoch: 0,
    userId: e.userId,
    tokenId: e.tokenId,
    leaseExpiresAt: null,
    logsRemovedAt: null,
    updatedAt: now,
    cancelRequestedAt: null,
    restartCount: 0,
    recoveryCount: 0,
    exitCodeRestartCount: 0,
    currentTask: 0,
    nextAttemptAt: null,
    taskCount: job.tasks.length,
    groupId: e.groupId,
    groupIndex: e.groupIndex,
    groupLead: e.groupLead,
    scheduleId: e.scheduleId,
    depsWaiting: e.depsWaiting,
    readyAt: null,
  };
  const tasks: Task[] = job.tasks.map((t, index) => ({
    id: ids.taskIds[index],
    jobId: row.id,
    index,
    name: t.name ?? null,
    status: 'PENDING',
    statusReason: null,
    spec: JSON.parse(JSON.stringify(t.spec)),
    restarts: 0,
    recoveries: 0,
    exitCodeRestarts: 0,
    exitCode: null,
    startedAt: null,
    endedAt: null,
  }));
  const event: JobEvent = { id: ids.eventId, jobId: row.id, at: now, entity: 'job', taskIndex: null, attemptNumber: null, from: null, to: 'PENDING', reason: 'submitted' };
  logger().info({ jobId: row.id, name: row.name, tasks: job.tasks.length }, `job ${row.id}: submitted (${row.name})`);
  store.bus.emit({ type: 'created', jobId: row.id, event, job: { cpus: row.cpus, nodes: row.nodes, gpus: row.gpus, executor: row.executor, priority: row.priority, depsWaiting: row.depsWaiting } });
  return { ...row, tasks };
}
