/**
 * Jobs by id as a list shows them (JobListRow: the summary columns, the tasks with their attempt
 * counts and latest nodes, the submitter's name) in ONE statement — what the list stream reads
 * for every batch of changed jobs, each second a dashboard is open while jobs start and end. It
 * was four Prisma queries (jobs, tasks, attempt counts, user names), each parsed and planned anew
 * on PGlite; this is one text, prepared once there (prepared.ts: the ids go as one text value).
 * Rows decoded by the column table as Prisma reads them (tests/integration/store-list-rows.test.ts
 * compares them with a page read by Prisma, lib/store/list.ts listJobRows).
 */
import type { Prisma, Task } from '../generated/prisma/client';
import type { StoreScope } from './handle';
import { queryPrepared } from './prepared';
import { decodeRow } from './sql';

/**
 * The Job columns a list shows. Not the spec, its YAML, hash or metadata: a list page reads 50
 * rows, and a real job's spec (every task's run script and envs) and YAML are most of its row —
 * read, parsed and dropped for nothing.
 */
export const JOB_SUMMARY_COLUMNS = {
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
  exitCodeRestartCount: true,
  labels: true,
  cancelRequestedAt: true,
  priority: true,
  queue: true,
  pendingReason: true,
  pendingPlace: true,
  nextAttemptAt: true,
  userId: true,
  groupId: true,
  groupIndex: true,
  groupLead: true,
  scheduleId: true,
  depsWaiting: true,
} satisfies Prisma.JobSelect;

/** A Job row as far as a list needs it (a whole Job row is one too). */
export type JobSummaryRow = Prisma.JobGetPayload<{ select: typeof JOB_SUMMARY_COLUMNS }>;

/**
 * A job of a list: its summary columns, and its tasks (pipeline order) with their attempt counts
 * and the nodes of their latest attempt (Attempt.nodes; null: none recorded).
 */
export interface JobListRow {
  job: JobSummaryRow;
  tasks: Array<{ task: Task; attempts: number; nodes: unknown }>;
  /** The submitter's name (User.name), or null when none is recorded (or the user is gone). */
  owner: string | null;
}

/** The summary columns' names. */
const SUMMARY_KEYS = Object.keys(JOB_SUMMARY_COLUMNS);

const LIST_ROWS_SQL = `SELECT jsonb_build_object(${SUMMARY_KEYS.map((k) => `'${k}', j."${k}"`).join(', ')}) AS "job",
  COALESCE((SELECT jsonb_agg(jsonb_build_object('task', to_jsonb(t.*),
      'attempts', (SELECT count(*) FROM "Attempt" a WHERE a."taskId" = t."id"),
      'nodes', (SELECT a."nodes" FROM "Attempt" a WHERE a."taskId" = t."id" ORDER BY a."number" DESC LIMIT 1)) ORDER BY t."index")
    FROM "Task" t WHERE t."jobId" = j."id"), '[]'::jsonb) AS "tasks",
  (SELECT u."name" FROM "User" u WHERE u."id" = j."userId") AS "owner"
  FROM "Job" j WHERE j."id" = ANY (string_to_array($1::text, ',')::int[])`;

/** The list rows of the given ids (missing ids are skipped), in the order of `ids`. */
export async function jobListRows(store: StoreScope, ids: readonly number[]): Promise<JobListRow[]> {
  const wanted = ids.filter((id) => Number.isInteger(id));
  if (wanted.length === 0) return [];
  const rows = await queryPrepared<{ job: Record<string, unknown>; tasks: Array<{ task: Record<string, unknown>; attempts: number; nodes: unknown }>; owner: string | null }>(
    store.prisma,
    store.prepared,
    LIST_ROWS_SQL,
    [[...new Set(wanted)].join(',')],
  );
  const cols = store.columns;
  const byId = new Map<number, JobListRow>();
  for (const r of rows) {
    const full = decodeRow<Record<string, unknown>>(cols.job, r.job);
    const job = Object.fromEntries(SUMMARY_KEYS.map((k) => [k, full[k]])) as JobSummaryRow;
    byId.set(job.id, { job, tasks: r.tasks.map((t) => ({ task: decodeRow<Task>(cols.task, t.task), attempts: Number(t.attempts), nodes: t.nodes ?? null })), owner: r.owner ?? null });
  }
  return ids.map((id) => byId.get(id)).filter((r): r is JobListRow => !!r);
}
