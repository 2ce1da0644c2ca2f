/**
 * Small reads of jobs by key: what the verbs make (lib/control: a job by its submissionId, the
 * status of some jobs), what a job stream reads at its start and to see the job still there, when
 * the retention policy removed a job's logs, and what another server's `created` notification
 * carries.
 */
import type { Job, Task } from '../generated/prisma/client';
import type { JobStatus } from '../jobs/status';
import type { StoreScope } from './handle';

/** The job submitted with this idempotency key (Job.submissionId), or null. */
export function jobBySubmissionId(store: StoreScope, submissionId: string): Promise<Job | null> {
  return store.prisma.job.findUnique({ where: { submissionId } });
}

/** The status of each of `ids` that exists (missing ids are absent from the map). */
export async function jobStatuses(store: StoreScope, ids: readonly number[]): Promise<Map<number, JobStatus>> {
  if (ids.length === 0) return new Map();
  const rows = await store.prisma.job.findMany({ where: { id: { in: [...ids] } }, select: { id: true, status: true } });
  return new Map(rows.map((r) => [r.id, r.status as JobStatus]));
}

/** What a re-run submits again: the job's stored YAML, launch overrides and metadata (or null). */
export function jobSubmission(store: StoreScope, id: number): Promise<Pick<Job, 'id' | 'specYaml' | 'launch' | 'metadata' | 'groupId' | 'groupIndex' | 'userId' | 'status'> | null> {
  return store.prisma.job.findUnique({ where: { id }, select: { id: true, specYaml: true, launch: true, metadata: true, groupId: true, groupIndex: true, userId: true, status: true } });
}

/** PENDING jobs of one submitter without a cancel request (what its pending quota counts). */
export function pendingJobsOf(store: StoreScope, userId: number): Promise<number> {
  return store.prisma.job.count({ where: { userId, status: 'PENDING', cancelRequestedAt: null } });
}

/** The submitter (Job.userId) of each of `ids` that exists (null: none recorded). */
export async function jobSubmitters(store: StoreScope, ids: readonly number[]): Promise<Map<number, number | null>> {
  if (ids.length === 0) return new Map();
  const rows = await store.prisma.job.findMany({ where: { id: { in: [...ids] } }, select: { id: true, userId: true } });
  return new Map(rows.map((r) => [r.id, r.userId]));
}

/** The queue of job `id` (Job.queue), or null when there is no such job. */
export async function jobQueueOf(store: StoreScope, id: number): Promise<string | null> {
  const row = await store.prisma.job.findUnique({ where: { id }, select: { queue: true } });
  return row?.queue ?? null;
}

/** Job `id` with its tasks in index order (a job stream's first read), or null. */
export function jobWithTasks(store: StoreScope, id: number): Promise<(Job & { tasks: Task[] }) | null> {
  return store.prisma.job.findUnique({ where: { id }, include: { tasks: { orderBy: { index: 'asc' } } } });
}

/** Whether job `id` exists (a stream's check that its job was not deleted). */
export async function jobExists(store: StoreScope, id: number): Promise<boolean> {
  return (await store.prisma.job.findUnique({ where: { id }, select: { id: true } })) !== null;
}

/** When the retention policy removed job `id`'s logs (null: kept, or no such job). */
export async function jobLogsRemovedAt(store: StoreScope, id: number): Promise<Date | null> {
  return (await store.prisma.job.findUnique({ where: { id }, select: { logsRemovedAt: true } }))?.logsRemovedAt ?? null;
}

/** What admission needs of a job another server created (its bus event's `job`), for those of `ids` that exist. */
export async function createdJobs(store: StoreScope, ids: readonly number[]): Promise<Array<Pick<Job, 'id' | 'cpus' | 'executor' | 'nodes' | 'priority'>>> {
  if (ids.length === 0) return [];
  return store.prisma.job.findMany({ where: { id: { in: [...ids] } }, select: { id: true, cpus: true, executor: true, nodes: true, priority: true } });
}
