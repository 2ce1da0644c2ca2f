/**
 * How a list-stream message (`/ws/jobs`, lib/logs/protocol.ts ListMessage) changes one cached
 * page of GET /api/jobs. Pure: the react-query layer applies it to every cached page.
 */
import type { JobList, JobSummary } from '../api/types';
import { isTerminal } from '../jobs/status';
import type { ListMessage } from '../logs/protocol';

/** The filters a cached list page was fetched with. */
export interface ListFilter {
  /** Status filter (empty: every status). */
  status: string[];
  /** Name/ID search ('' for none). */
  q: string;
  /** null for the first (newest) page. */
  cursor: string | null;
  limit: number;
}

/** Query key of a list page: ['jobs', 'list', filter]. */
export function listKey(filter: ListFilter): readonly ['jobs', 'list', ListFilter] {
  return ['jobs', 'list', filter] as const;
}

/**
 * The page after `msg`:
 * - `updated`: the job replaced in place (kept even if it no longer matches the status filter,
 *   so a user watching a RUNNING filter sees it finish; the next fetch drops it);
 * - `created`: prepended to a first page whose status filter it matches; a page with a text
 *   search answers 'refetch' (the server owns the search rules);
 * - `deleted`: removed.
 * Returns the same object when nothing changed.
 */
export function applyListMessage(page: JobList, filter: ListFilter, msg: ListMessage): JobList | 'refetch' {
  switch (msg.type) {
    case 'updated': {
      const i = page.jobs.findIndex((j) => j.id === msg.job.id);
      if (i < 0) return page;
      const jobs = page.jobs.slice();
      jobs[i] = msg.job;
      return { ...page, jobs };
    }
    case 'created': {
      if (filter.cursor !== null) return page;
      if (page.jobs.some((j) => j.id === msg.job.id)) return applyListMessage(page, filter, { type: 'updated', job: msg.job });
      if (filter.status.length && !filter.status.includes(msg.job.status)) return page;
      if (filter.q) return 'refetch';
      return { ...page, jobs: insertNewestFirst(page.jobs, msg.job) };
    }
    case 'deleted': {
      if (!page.jobs.some((j) => j.id === msg.jobId)) return page;
      return { ...page, jobs: page.jobs.filter((j) => j.id !== msg.jobId) };
    }
  }
}

/** Inserts a job keeping the list newest first (by id, which grows with submission). */
function insertNewestFirst(jobs: JobSummary[], job: JobSummary): JobSummary[] {
  const i = jobs.findIndex((j) => j.id < job.id);
  if (i < 0) return [...jobs, job];
  return [...jobs.slice(0, i), job, ...jobs.slice(i)];
}

/**
 * A freshly fetched page, merged with what the cache already holds for it: a job the cache knows
 * as terminal keeps that row when the fetched one is not terminal. A terminal job never changes
 * status again (lib/jobs/store, rule 3), so such a fetched row was read before the job ended — a
 * request that started before a list-stream `updated` message and answered after it (e.g. the
 * refetch after "Cancel selected" racing the CANCELLED update), which would otherwise leave the
 * row showing CANCELLING until the next change that never comes.
 */
export function keepTerminalRows(cached: JobList | undefined, fresh: JobList): JobList {
  if (!cached) return fresh;
  const ended = new Map<number, JobSummary>();
  for (const j of cached.jobs) if (isTerminal('job', j.status)) ended.set(j.id, j);
  if (ended.size === 0) return fresh;
  let changed = false;
  const jobs = fresh.jobs.map((j) => {
    const e = ended.get(j.id);
    if (e && !isTerminal('job', j.status)) {
      changed = true;
      return e;
    }
    return j;
  });
  return changed ? { ...fresh, jobs } : fresh;
}
