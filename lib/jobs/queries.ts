/**
 * Read side of jobs: the one place that maps database rows to the API shapes of
 * lib/api/types.ts (JobSummary, JobDetail…). The REST routes, the CLI (through the API), the
 * dashboard and the WebSocket hub all show jobs through these functions, so a job looks the
 * same everywhere.
 *
 * Lists use keyset pagination (`id < cursor ORDER BY id DESC`), served by the primary key and
 * the (status, id) index, so a deep page costs what the first one costs, with 10,000+ jobs.
 * A page costs three queries whatever its size: jobs, their tasks, attempt counts (groupBy).
 */
import { stat } from 'node:fs/promises';
import type { Attempt, Job, JobEvent, Prisma, PrismaClient, Task } from '../generated/prisma/client';
import type { AttemptView, JobDetail, JobEventView, JobList, JobSummary, TaskSummary, TaskView } from '../api/types';
import { maskEnvs, maskSpecYaml } from '../api/mask';
import { JOB_STATUSES, JOB_TERMINAL, type JobStatus } from './status';
import type { Resources, TaskSpec } from './spec';
import type { Db } from './store';

/** Largest job id (PostgreSQL `integer`). */
const MAX_ID = 2_147_483_647;

// ─── cursors ───────────────────────────────────────────────────────────────────────────────

/** The opaque cursor for "jobs older than this id": base64url of the decimal id. */
export function encodeCursor(lastId: number): string {
  return Buffer.from(String(lastId), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by encodeCursor(). Returns the id, or null when the text is not one
 * (wrong alphabet, not a positive integer, out of range) — callers answer 400.
 */
export function decodeCursor(cursor: string): number | null {
  if (!/^[A-Za-z0-9_-]{1,16}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[1-9][0-9]{0,9}$/.test(text)) return null;
  // Reject non-canonical encodings so one page has one cursor.
  if (encodeCursor(Number(text)) !== cursor) return null;
  const id = Number(text);
  return id <= MAX_ID ? id : null;
}

// ─── filters ───────────────────────────────────────────────────────────────────────────────

/** Which jobs a list or a bulk cancel is about. */
export interface JobFilter {
  /** Only these statuses (any when absent or empty). */
  status?: readonly JobStatus[];
  /** Case-insensitive name substring; when it is a number, also that exact job id. */
  q?: string;
}

/** The Prisma `where` for a JobFilter. */
export function jobFilterWhere(f: JobFilter): Prisma.JobWhereInput {
  const and: Prisma.JobWhereInput[] = [];
  if (f.status && f.status.length) and.push({ status: { in: [...new Set(f.status)] } });
  const q = f.q?.trim();
  if (q) {
    const byName: Prisma.JobWhereInput = { name: { contains: q, mode: 'insensitive' } };
    const n = /^[0-9]{1,10}$/.test(q) ? Number(q) : NaN;
    and.push(n >= 1 && n <= MAX_ID ? { OR: [{ id: n }, byName] } : byName);
  }
  return and.length ? { AND: and } : {};
}

/**
 * The Job columns a JobSummary shows. Not the spec, its YAML, hash or metadata: a list page
 * reads 50 rows, and a real job's spec (every task's run script and envs) and YAML are most of
 * its row — read, parsed and dropped for nothing.
 */
const JOB_SUMMARY_COLUMNS = {
  id: true,
  name: true,
  status: true,
  statusReason: true,
  submissionId: true,
  submittedAt: true,
  startedAt: true,
  endedAt: true,
  taskCount: true,
  currentTask: true,
  restartCount: true,
  recoveryCount: true,
  cancelRequestedAt: true,
} satisfies Prisma.JobSelect;

/** A Job row as far as a JobSummary needs it (a whole Job row is one too). */
export type JobSummaryRow = Prisma.JobGetPayload<{ select: typeof JOB_SUMMARY_COLUMNS }>;

/** Options of listJobs(). */
export interface ListJobsOptions extends JobFilter {
  /** Page size (the API bounds it to 1–200). Default 50. */
  limit?: number;
  /** Only jobs with a smaller id (the decoded cursor). */
  beforeId?: number | null;
  /** "Now" for running durations (default the clock). */
  now?: Date;
}

/**
 * One page of jobs, newest first (id descending), with their task summaries.
 * `nextCursor` is null on the last page.
 */
export async function listJobs(db: Db, opts: ListJobsOptions = {}): Promise<JobList> {
  const limit = Math.max(1, Math.min(opts.limit ?? 50, 1000));
  const where = jobFilterWhere(opts);
  if (opts.beforeId != null) where.id = { lt: opts.beforeId };
  const rows = await db.job.findMany({ where, orderBy: { id: 'desc' }, take: limit + 1, select: JOB_SUMMARY_COLUMNS });
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const jobs = await summarize(db, page, opts.now ?? new Date());
  return { jobs, nextCursor: more ? encodeCursor(page[page.length - 1].id) : null };
}

/**
 * Ids of the jobs a filter selects that are not terminal yet (for a bulk cancel), newest first.
 * With no status and no q, every non-terminal job.
 */
export async function activeJobIds(db: Db, f: JobFilter): Promise<number[]> {
  const active = JOB_STATUSES.filter((s) => !JOB_TERMINAL.has(s));
  const status = f.status && f.status.length ? f.status.filter((s) => !JOB_TERMINAL.has(s)) : active;
  if (status.length === 0) return [];
  const rows = await db.job.findMany({ where: jobFilterWhere({ status, q: f.q }), select: { id: true }, orderBy: { id: 'desc' } });
  return rows.map((r) => r.id);
}

/** JobSummaries of the given ids (missing ids are skipped), in the order of `ids`. */
export async function getJobSummaries(db: Db, ids: readonly number[], now: Date = new Date()): Promise<JobSummary[]> {
  if (ids.length === 0) return [];
  const rows = await db.job.findMany({ where: { id: { in: [...ids] } }, select: JOB_SUMMARY_COLUMNS });
  const byId = new Map((await summarize(db, rows, now)).map((j) => [j.id, j]));
  return ids.map((id) => byId.get(id)).filter((j): j is JobSummary => !!j);
}

/** The JobSummary of one job, or null when it does not exist (e.g. deleted). */
export async function getJobSummary(db: Db, id: number, now: Date = new Date()): Promise<JobSummary | null> {
  return (await getJobSummaries(db, [id], now))[0] ?? null;
}

/** Tasks and attempt counts for a set of jobs: two queries. */
async function summarize(db: Db, jobs: JobSummaryRow[], now: Date): Promise<JobSummary[]> {
  if (jobs.length === 0) return [];
  const ids = jobs.map((j) => j.id);
  const [tasks, counts] = await Promise.all([
    db.task.findMany({ where: { jobId: { in: ids } }, orderBy: [{ jobId: 'asc' }, { index: 'asc' }] }),
    db.attempt.groupBy({ by: ['taskId'], where: { jobId: { in: ids } }, _count: { _all: true } }),
  ]);
  const attemptsOf = new Map(counts.map((c) => [c.taskId, c._count._all]));
  const tasksOf = new Map<number, Task[]>();
  for (const t of tasks) {
    const list = tasksOf.get(t.jobId);
    if (list) list.push(t);
    else tasksOf.set(t.jobId, [t]);
  }
  return jobs.map((j) => toJobSummary(j, (tasksOf.get(j.id) ?? []).map((t) => toTaskSummary(t, attemptsOf.get(t.id) ?? 0)), now));
}

// ─── mapping ───────────────────────────────────────────────────────────────────────────────

/** The display fields of a Task row's `spec` (a TaskSpec as lib/jobs/submit.ts stores it). */
function taskSpecView(json: unknown): {
  setup: string | null;
  run: string | null;
  envs: Record<string, string>;
  workdir: string | null;
  resources: Omit<Resources, 'other'>;
  maxRestarts: number;
  recoverOnExitCodes: number[];
} {
  const t = (json ?? {}) as Partial<TaskSpec>;
  const r = t.resources;
  return {
    setup: t.setup ?? null,
    run: t.run ?? null,
    envs: t.envs ?? {},
    workdir: t.workdir ?? null,
    resources: { cpus: r?.cpus ?? 1, cpusAtLeast: r?.cpusAtLeast ?? false, memoryGb: r?.memoryGb ?? null, memoryAtLeast: r?.memoryAtLeast ?? false },
    maxRestarts: t.jobRecovery?.maxRestartsOnErrors ?? 0,
    recoverOnExitCodes: t.jobRecovery?.recoverOnExitCodes ?? [],
  };
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
const span = (from: Date, to: Date): number => Math.max(0, to.getTime() - from.getTime());

/** Maps one Task row and its attempt count to a TaskSummary. */
export function toTaskSummary(t: Task, attempts: number): TaskSummary {
  return {
    index: t.index,
    name: t.name,
    status: t.status,
    attempts,
    restarts: t.restarts,
    maxRestarts: taskSpecView(t.spec).maxRestarts,
    recoveries: t.recoveries,
    startedAt: iso(t.startedAt),
    endedAt: iso(t.endedAt),
  };
}

/**
 * Maps a Job row and its task summaries (pipeline order) to a JobSummary. Durations run to
 * `now` while the job has not ended (SkyPilot's TOT. DURATION and JOB DURATION).
 */
export function toJobSummary<T extends TaskSummary>(job: JobSummaryRow, tasks: T[], now: Date = new Date()): Omit<JobSummary, 'tasks'> & { tasks: T[] } {
  const end = job.endedAt ?? now;
  return {
    id: job.id,
    name: job.name,
    status: job.status,
    statusReason: job.statusReason,
    submissionId: job.submissionId,
    submittedAt: job.submittedAt.toISOString(),
    startedAt: iso(job.startedAt),
    endedAt: iso(job.endedAt),
    totalDurationMs: span(job.submittedAt, end),
    jobDurationMs: job.startedAt ? span(job.startedAt, end) : null,
    taskCount: job.taskCount,
    currentTask: job.currentTask,
    tasksSucceeded: tasks.filter((t) => t.status === 'SUCCEEDED').length,
    restartCount: job.restartCount,
    recoveryCount: job.recoveryCount,
    cancelRequested: job.cancelRequestedAt !== null,
    tasks,
  };
}

/** Size of a file in bytes; 0 when the path is null or the file does not exist (yet). */
async function fileSize(p: string | null): Promise<number> {
  if (!p) return 0;
  try {
    return (await stat(p)).size;
  } catch {
    return 0;
  }
}

/** Maps an Attempt row to an AttemptView (logBytes: the log file's size now). */
export async function toAttemptView(a: Attempt): Promise<AttemptView> {
  return {
    number: a.number,
    status: a.status,
    cause: a.cause === 'restart' || a.cause === 'recovery' ? a.cause : 'first',
    exitCode: a.exitCode,
    reason: a.statusReason,
    executor: a.executor,
    createdAt: a.createdAt.toISOString(),
    startedAt: iso(a.startedAt),
    endedAt: iso(a.endedAt),
    logBytes: await fileSize(a.logPath),
  };
}

/** Maps a JobEvent row to a JobEventView. */
export function toJobEventView(e: JobEvent): JobEventView {
  return {
    id: e.id,
    at: e.at.toISOString(),
    entity: e.entity === 'task' || e.entity === 'attempt' ? e.entity : 'job',
    taskIndex: e.taskIndex,
    attemptNumber: e.attemptNumber,
    from: e.from,
    to: e.to,
    reason: e.reason,
  };
}

/** Maps a Task row with its attempts to a TaskView (envs masked). */
export async function toTaskView(t: Task & { attempts: Attempt[] }): Promise<TaskView> {
  const s = taskSpecView(t.spec);
  return {
    ...toTaskSummary(t, t.attempts.length),
    statusReason: t.statusReason,
    exitCode: t.exitCode,
    setup: s.setup,
    run: s.run,
    envs: maskEnvs(s.envs),
    workdir: s.workdir,
    resources: s.resources,
    recoverOnExitCodes: s.recoverOnExitCodes,
    attemptList: await Promise.all([...t.attempts].sort((a, b) => a.number - b.number).map(toAttemptView)),
  };
}

/**
 * The whole story of one job for its page: tasks with every attempt (log sizes read from disk),
 * every event in order, the masked YAML. Null when the job does not exist.
 */
export async function getJobDetail(db: PrismaClient, id: number, now: Date = new Date()): Promise<JobDetail | null> {
  const job = await db.job.findUnique({
    where: { id },
    include: { tasks: { orderBy: { index: 'asc' }, include: { attempts: { orderBy: { number: 'asc' } } } }, events: { orderBy: { id: 'asc' } } },
  });
  if (!job) return null;
  const tasks = await Promise.all(job.tasks.map(toTaskView));
  return {
    ...toJobSummary(job, tasks, now),
    events: job.events.map(toJobEventView),
    specYaml: maskSpecYaml(job.specYaml),
    metadata: job.metadata ?? null,
    executor: job.executor,
  };
}
