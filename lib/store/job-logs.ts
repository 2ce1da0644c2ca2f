/** The read behind the whole-job log download: every task's attempts, in order, with their logs. */
import type { StoreScope } from './handle';

/** One attempt as the whole-job download needs it. */
export interface JobLogAttempt {
  number: number;
  status: string;
  exitCode: number | null;
  logPath: string | null;
}

/** A job's tasks (index order) and their attempts (number order), or null for an unknown job. */
export interface JobLogs {
  id: number;
  name: string;
  tasks: { index: number; name: string | null; status: string; spec: unknown; attempts: JobLogAttempt[] }[];
}

/** Reads a job's tasks and attempts for its log download (one query). */
export async function readJobLogs(store: StoreScope, jobId: number): Promise<JobLogs | null> {
  const job = await store.prisma.job.findUnique({
    where: { id: jobId },
    select: {
      id: true,
      name: true,
      tasks: {
        orderBy: { index: 'asc' },
        select: { index: true, name: true, status: true, spec: true, attempts: { orderBy: { number: 'asc' }, select: { number: true, status: true, exitCode: true, logPath: true } } },
      },
    },
  });
  return job;
}
