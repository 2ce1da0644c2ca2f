/**
 * How a list-stream message (`/ws/jobs`, lib/logs/protocol.ts ListMessage) changes one cached
 * page of GET /api/jobs. Pure: the react-query layer applies it to every cached page.
 */
import type { JobList, JobSummary, ListMessage } from '../api/types';
import { isTerminal } from '../jobs/status';

/** The filters a cached list page was fetched with. */
export interface ListFilter {
  /** Status filter (empty: every status). */
  status: string[];
  /** Name/ID search ('' for none). */
  q: string;
  /** Only this operator queue's jobs ('' or absent: every queue). */
  queue?: string;
  /** Only the jobs of this submitter (its user name; absent: everyone's) — GET /api/jobs `owner`. */
  owner?: string;
  /** The order (GET /api/jobs `sort`). */
  sort: 'newest' | 'oldest' | 'name';
  /** null for the first (newest) page. */
  cursor: string | null;
  limit: number;
  /** A group (array) is one row, its first job's (GET /api/jobs `fold=groups`). */
  fold?: boolean;
}

/** Query key of a list page: ['jobs', 'list', filter]. */
export function listKey(filter: ListFilter): readonly ['jobs', 'list', ListFilter] {
  return ['jobs', 'list', filter] as const;
}

/**
 * The page after `msg`:
 * - `updated`: the job replaced in place (kept even if it no longer matches the status filter,
 *   so a user watching a RUNNING filter sees it finish; the next fetch drops it);
 * - `created`: prepended to a first page whose status (and queue) filter it matches; a page with a text
 *   search, or in another order than newest first, answers 'refetch' (the server owns the search
 *   and the order);
 * - `deleted`: removed.
 * Returns the same object when nothing changed.
 */
export function applyListMessage(page: JobList, filter: ListFilter, msg: ListMessage): JobList | 'refetch' {
  // A folded list shows a group as its first job: the others are in its row's counts (GroupRow reads them).
  if (filter.fold && msg.type !== 'deleted' && msg.job.group && !msg.job.group.lead) return page;
  switch (msg.type) {
    case 'updated': {
      const i = page.jobs.findIndex((j) => j.id === msg.job.id);
      if (i < 0) return page;
      const jobs = page.jobs.slice();
      jobs[i] = msg.job;
      return { ...page, jobs };
    }
    case 'created': {
      if (filter.sort !== 'newest') return page.jobs.some((j) => j.id === msg.job.id) ? applyListMessage(page, filter, { type: 'updated', job: msg.job }) : 'refetch';
      if (filter.cursor !== null) return page;
      if (page.jobs.some((j) => j.id === msg.job.id)) return applyListMessage(page, filter, { type: 'updated', job: msg.job });
      if (filter.status.length && !filter.status.includes(msg.job.status)) return page;
      if (filter.queue && msg.job.queue !== filter.queue) return page;
      if (filter.owner && msg.job.owner !== filter.owner) return page;
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
 * A freshly fetched page, with the list-stream messages that arrived while the fetch was in
 * flight (`since`, oldest first) applied on top, in order. The fetch may have read the database
 * before those changes (the page's first GET after the socket opened, answering after the
 * stream's RUNNING; the refetch after "Cancel selected", answering after CANCELLED), and no
 * further message would correct the row. Replaying them covers every case, including a first
 * load with nothing cached yet, where the messages had no page to land on when they came. Each
 * message carries the job as the server read it after the change, and messages arrive in order,
 * so the page converges to the newest state; a later change arrives through the stream.
 *
 * A job the cache knows as terminal also keeps that row over a non-terminal fetched one (a
 * terminal job never changes status: lib/store/transition.ts). A `created` message that would need
 * the server's search (a page with `q`) is skipped here: applying it already asked for a refetch.
 */
export function mergeFetchedPage(cached: JobList | undefined, fresh: JobList, filter: ListFilter, since: readonly ListMessage[]): JobList {
  let page = fresh;
  for (const msg of since) {
    const next = applyListMessage(page, filter, msg);
    if (next !== 'refetch') page = next;
  }
  if (!cached) return page;
  const ended = new Map<number, JobSummary>();
  for (const j of cached.jobs) if (isTerminal('job', j.status)) ended.set(j.id, j);
  if (!ended.size) return page;
  let changed = false;
  const jobs = page.jobs.map((j) => {
    const c = ended.get(j.id);
    if (c && c !== j && !isTerminal('job', j.status)) {
      changed = true;
      return c;
    }
    return j;
  });
  return changed ? { ...page, jobs } : page;
}
