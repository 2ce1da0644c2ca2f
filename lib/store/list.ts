/**
 * Lists of jobs as rows: a page of jobs with their tasks and attempt counts, the jobs of a
 * filter (the rows of given ids: list-rows.ts). lib/api/views.ts maps them to what the API shows.
 *
 * Lists use keyset pagination (`id < beforeId ORDER BY id DESC`; oldest first `id > …`; by name
 * `(name, id) > …`), served by the primary key, the (status, id) and the name indexes, so a deep
 * page costs what the first one costs, with 10,000+ jobs.
 * A page costs three queries whatever its size: jobs, their tasks, attempt counts (groupBy).
 */
import { Prisma } from '../generated/prisma/client';
import { JOB_STATUSES, JOB_TERMINAL, type JobStatus } from '../jobs/status';
import type { StoreScope } from './handle';
import { allJobStatusCounts, type StatusCounts } from './status-counts';
import { JOB_SUMMARY_COLUMNS, type JobListRow, type JobSummaryRow } from './list-rows';

export type { JobListRow, JobSummaryRow };

/** Largest job id (PostgreSQL `integer`). */
export const MAX_JOB_ID = 2_147_483_647;

/** Which jobs a list or a bulk cancel is about. */
export interface JobFilter {
  /** Only these statuses (any when absent or empty). */
  status?: readonly JobStatus[];
  /** Case-insensitive name substring; when it is a number (`4` or `#4`), also that exact job id. */
  q?: string;
  /** Only the jobs of this operator queue (Job.queue, exact). */
  queue?: string;
  /** Only jobs submitted at or after this time (Job.submittedAt ≥). */
  submittedAfter?: Date;
  /** Only jobs submitted before this time (Job.submittedAt <). */
  submittedBefore?: Date;
  /** Only the jobs this user submitted (Job.userId). */
  userId?: number;
  /**
   * Only jobs whose metadata holds every one of these pairs (a key's value as this string:
   * jsonb containment; the API bounds it to 8 pairs, keys ≤ 64 and values ≤ 200 characters).
   */
  metadata?: ReadonlyArray<readonly [key: string, value: string]>;
  /** Only the jobs of this group (Job.groupId; docs/design.md §17 "Groups"). */
  groupId?: number;
  /** Only the jobs this schedule's fires submitted (Job.scheduleId). */
  scheduleId?: number;
  /** A group stands as its first job alone (Job.groupLead): the folded list. */
  foldGroups?: boolean;
  /**
   * Only jobs whose tasks carry every one of these labels (`resources.labels`, Job.labels: jsonb
   * containment, each pair in some task; the API bounds it to 8 pairs).
   */
  labels?: ReadonlyArray<readonly [key: string, value: string]>;
}

/**
 * `s` as a literal for a LIKE pattern: backslash, `%` and `_` escaped with PostgreSQL's default escape
 * character (backslash). Prisma's `contains` / `startsWith` / `endsWith` put the value into
 * `ILIKE '%' || value || '%'` as it is, so without this a search for `wild_1` also finds
 * `wildX1`, and a bulk cancel by filter stops jobs the user never named. Every substring search
 * of the store goes through it.
 */
export function likeLiteral(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The Prisma `where` for a JobFilter (`q` matched literally: {@link likeLiteral}). Every part is
 * answered from an index (docs/design.md "Search"): `q` from the trigram GIN index on the name
 * (`ILIKE '%…%'`; a q under 3 characters has no trigram and scans), the status and the
 * submitted-time range from (status, submittedAt) / (submittedAt), the id from the primary key,
 * the metadata pairs from the GIN index on `metadataSet` (`[metadata] @> [{k: v}, …]`: one object
 * a pair, so a key given twice with two values matches nothing, as AND says), the labels from the
 * GIN index on `labels` (`labels @> [{k: v}, …]`: every pair held by some task's labels).
 */
export function jobFilterWhere(f: JobFilter): Prisma.JobWhereInput {
  const and: Prisma.JobWhereInput[] = [];
  if (f.status && f.status.length) and.push({ status: { in: [...new Set(f.status)] } });
  if (f.queue !== undefined) and.push({ queue: f.queue });
  if (f.submittedAfter || f.submittedBefore) and.push({ submittedAt: { ...(f.submittedAfter ? { gte: f.submittedAfter } : {}), ...(f.submittedBefore ? { lt: f.submittedBefore } : {}) } });
  if (f.userId !== undefined) and.push({ userId: f.userId });
  if (f.metadata && f.metadata.length) and.push({ metadataSet: { array_contains: f.metadata.map(([k, v]) => ({ [k]: v })) } });
  if (f.groupId !== undefined) and.push({ groupId: f.groupId });
  if (f.scheduleId !== undefined) and.push({ scheduleId: f.scheduleId });
  if (f.foldGroups) and.push({ OR: [{ groupId: null }, { groupLead: true }] });
  if (f.labels && f.labels.length) and.push({ labels: { array_contains: f.labels.map(([k, v]) => ({ [k]: v })) } });
  const q = f.q?.trim();
  if (q) {
    const byName: Prisma.JobWhereInput = { name: { contains: likeLiteral(q), mode: 'insensitive' } };
    // "#4" is how the dashboard labels job 4, so it finds job 4 as "4" does.
    const digits = /^#?([0-9]{1,10})$/.exec(q)?.[1];
    const n = digits ? Number(digits) : NaN;
    and.push(n >= 1 && n <= MAX_JOB_ID ? { OR: [{ id: n }, byName] } : byName);
  }
  return and.length ? { AND: and } : {};
}

/** The orders a list comes in: newest first (id descending, the default), oldest first, by name (A→Z, then id). */
export const LIST_SORTS = ['newest', 'oldest', 'name'] as const;
/** One of LIST_SORTS. */
export type ListSort = (typeof LIST_SORTS)[number];

/** Options of listJobRows(). */
export interface ListJobsOptions extends JobFilter {
  /** Page size, 1–1000 (the API bounds it to 1–200). Default 50. */
  limit?: number;
  /** The order (default newest). */
  sort?: ListSort;
  /**
   * Where the previous page ended (the decoded cursor): its last job's id — newest first, the
   * page holds smaller ids; oldest first, larger — and, sorted by name, `afterName` its name.
   */
  beforeId?: number | null;
  afterName?: string | null;
}

export type { StatusCounts };

/**
 * How many jobs a search (JobFilter but its status) finds in each status: one grouped query. The
 * unfiltered counts on a Store come from the status-count rows instead (status-counts.ts): the
 * same numbers without reading every job.
 */
export async function jobStatusCounts(store: StoreScope, f: Omit<JobFilter, 'status'>): Promise<StatusCounts> {
  const where = jobFilterWhere({ ...f, status: undefined });
  if (Object.keys(where).length === 0 && 'submits' in store) return allJobStatusCounts(store);
  const rows = await store.prisma.job.groupBy({ by: ['status'], where, _count: { _all: true } });
  const byStatus: StatusCounts['byStatus'] = {};
  let total = 0;
  for (const r of rows) {
    byStatus[r.status as JobStatus] = r._count._all;
    total += r._count._all;
  }
  return { total, byStatus };
}

/** One page of jobs in `opts.sort` order (default newest first); `more` when jobs follow the page. */
export async function listJobRows(store: StoreScope, opts: ListJobsOptions = {}): Promise<{ jobs: JobListRow[]; more: boolean }> {
  const limit = Math.max(1, Math.min(opts.limit ?? 50, 1000));
  const sort = opts.sort ?? 'newest';
  const where = jobFilterWhere(opts);
  if (opts.beforeId != null) {
    if (sort === 'newest') where.id = { lt: opts.beforeId };
    else if (sort === 'oldest') where.id = { gt: opts.beforeId };
    else {
      const name = opts.afterName ?? '';
      where.OR = [{ name: { gt: name } }, { name, id: { gt: opts.beforeId } }];
    }
  }
  const orderBy: Prisma.JobOrderByWithRelationInput[] = sort === 'newest' ? [{ id: 'desc' }] : sort === 'oldest' ? [{ id: 'asc' }] : [{ name: 'asc' }, { id: 'asc' }];
  const inRange = await pageOfPastRange(store, opts, where, sort, limit);
  const rows = inRange ?? (await store.prisma.job.findMany({ where, orderBy, take: limit + 1, select: JOB_SUMMARY_COLUMNS }));
  const more = rows.length > limit;
  return { jobs: await withTasks(store, more ? rows.slice(0, limit) : rows), more };
}

/** Most jobs a submitted-time range may match for pageOfPastRange() to cut the page from them. */
export const RANGE_FIRST_MAX = 2000;

/**
 * The page (limit + 1 rows, in `sort` order) of a filter whose submitted-time range leaves out the
 * end the list starts from — newest first with `submittedBefore`, oldest first with
 * `submittedAfter` — read from the range itself; null when this does not apply or the range
 * matches more than RANGE_FIRST_MAX jobs (the plain query then serves the page; a wide range far
 * in the past still walks the newer jobs).
 *
 * Why (docs/design.md §12 "Search"): for `ORDER BY id DESC LIMIT 51` the planner walks the primary
 * key from the newest job and filters, expecting matches spread evenly over the ids; but ids follow
 * submission times, so a range in the past matches nothing until the walk reaches it (100,000 jobs,
 * a one-day range in the middle: 50,000 rows read, 39 ms on PGlite, where reading the range's
 * 1,728 matches from (status, submittedAt) takes 6 ms). Here the matching ids come from the
 * range's index (submitted newest first, at most RANGE_FIRST_MAX + 1 of them: a bounded read), the
 * page is cut from all of them, and its rows are read by id with the filter again. Exact: when
 * fewer than the bound match, every match is among the ids read.
 */
async function pageOfPastRange(store: StoreScope, f: JobFilter, where: Prisma.JobWhereInput, sort: ListSort, limit: number): Promise<JobSummaryRow[] | null> {
  if (!(sort === 'newest' ? f.submittedBefore : sort === 'oldest' ? f.submittedAfter : undefined)) return null;
  const matches = await store.prisma.job.findMany({ where, select: { id: true }, orderBy: { submittedAt: sort === 'newest' ? 'desc' : 'asc' }, take: RANGE_FIRST_MAX + 1 });
  if (matches.length > RANGE_FIRST_MAX) return null;
  const ids = matches
    .map((m) => m.id)
    .sort((a, b) => (sort === 'newest' ? b - a : a - b))
    .slice(0, limit + 1);
  if (ids.length === 0) return [];
  const rows = await store.prisma.job.findMany({ where: { AND: [where, { id: { in: ids } }] }, select: JOB_SUMMARY_COLUMNS });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is JobSummaryRow => r !== undefined);
}

/**
 * Ids of the jobs a filter selects that are not terminal yet (for a bulk cancel), newest first.
 * With no status and no q, every non-terminal job.
 */
export async function activeJobIds(store: StoreScope, f: JobFilter): Promise<number[]> {
  const active = JOB_STATUSES.filter((s) => !JOB_TERMINAL.has(s));
  const status = f.status && f.status.length ? f.status.filter((s) => !JOB_TERMINAL.has(s)) : active;
  if (status.length === 0) return [];
  const rows = await store.prisma.job.findMany({ where: jobFilterWhere({ ...f, status }), select: { id: true }, orderBy: { id: 'desc' } });
  return rows.map((r) => r.id);
}

/** The names of users by id (one query; none for an empty set). */
export async function userNames(store: StoreScope, ids: ReadonlyArray<number | null>): Promise<Map<number, string>> {
  const wanted = [...new Set(ids.filter((i): i is number => i !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await store.prisma.user.findMany({ where: { id: { in: wanted } }, select: { id: true, name: true } });
  return new Map(rows.map((r) => [r.id, r.name]));
}

/**
 * Tasks, attempt counts (with each task's latest attempt's nodes: one grouped read of the attempts,
 * by the Attempt(jobId) index) and submitter names for a set of jobs: three queries.
 */
async function withTasks(store: StoreScope, jobs: JobSummaryRow[]): Promise<JobListRow[]> {
  if (jobs.length === 0) return [];
  const ids = jobs.map((j) => j.id);
  const [tasks, counts, names] = await Promise.all([
    store.prisma.task.findMany({ where: { jobId: { in: ids } }, orderBy: [{ jobId: 'asc' }, { index: 'asc' }] }),
    store.prisma.$queryRaw<Array<{ taskId: number; n: number; nodes: unknown }>>(Prisma.sql`
      SELECT "taskId", count(*)::int AS "n", (array_agg("nodes" ORDER BY "number" DESC))[1] AS "nodes"
      FROM "Attempt" WHERE "jobId" IN (${Prisma.join(ids)}) GROUP BY "taskId"`),
    userNames(store, jobs.map((j) => j.userId)),
  ]);
  const attemptsOf = new Map(counts.map((c) => [c.taskId, c]));
  const tasksOf = new Map<number, JobListRow['tasks']>();
  for (const t of tasks) {
    const a = attemptsOf.get(t.id);
    const entry = { task: t, attempts: a?.n ?? 0, nodes: a?.nodes ?? null };
    const list = tasksOf.get(t.jobId);
    if (list) list.push(entry);
    else tasksOf.set(t.jobId, [entry]);
  }
  return jobs.map((job) => ({ job, tasks: tasksOf.get(job.id) ?? [], owner: job.userId === null ? null : (names.get(job.userId) ?? null) }));
}
