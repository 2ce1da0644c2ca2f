/** The read behind the cross-job log search (lib/api/grep.ts): which log files a filter's jobs have. */
import { jobFilterWhere, type JobFilter } from './list';
import type { StoreScope } from './handle';

/** One attempt's log to search, and where it belongs. */
export interface LogSearchTarget {
  jobId: number;
  task: number;
  attempt: number;
  logPath: string;
}

/**
 * The logs of the newest `maxJobs` jobs the filter selects (the list's filter, its indexes),
 * newest job first, then task and attempt order; jobs whose logs the retention policy removed
 * are skipped. Two queries.
 */
export async function logSearchTargets(store: StoreScope, f: JobFilter, maxJobs: number): Promise<{ jobs: number; targets: LogSearchTarget[] }> {
  const jobs = await store.prisma.job.findMany({ where: { AND: [jobFilterWhere(f), { logsRemovedAt: null }] }, orderBy: { id: 'desc' }, take: maxJobs, select: { id: true } });
  if (jobs.length === 0) return { jobs: 0, targets: [] };
  const rows = await store.prisma.attempt.findMany({
    where: { jobId: { in: jobs.map((j) => j.id) }, logPath: { not: null } },
    select: { jobId: true, number: true, logPath: true, task: { select: { index: true } } },
  });
  rows.sort((a, b) => b.jobId - a.jobId || a.task.index - b.task.index || a.number - b.number);
  return { jobs: jobs.length, targets: rows.map((r) => ({ jobId: r.jobId, task: r.task.index, attempt: r.number, logPath: r.logPath! })) };
}
