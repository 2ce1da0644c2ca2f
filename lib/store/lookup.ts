/** Small reads the verbs make (lib/control): a job by its submissionId, the status of some jobs. */
import type { Job } from '../generated/prisma/client';
import type { JobStatus } from '../jobs/status';
import type { StoreScope } from './store';

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
export function jobSubmission(store: StoreScope, id: number): Promise<Pick<Job, 'id' | 'specYaml' | 'launch' | 'metadata'> | null> {
  return store.prisma.job.findUnique({ where: { id }, select: { id: true, specYaml: true, launch: true, metadata: true } });
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
