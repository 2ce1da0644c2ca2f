/**
 * The monitor's reads of the jobs it follows (docs/design.md §6 "The monitor's systems"): the
 * reconcile scan — the non-terminal jobs that are admitted or being cancelled — and one job as a
 * step reads it fresh, with its tasks and each task's latest attempt.
 */
import type { Attempt, Job, Task } from '../generated/prisma/client';
import { JOB_TERMINAL } from '../jobs/status';
import type { StoreScope } from './handle';
import { queryPrepared } from './prepared';
import { decodeRow } from './sql';

/** A job as a step reads it: its tasks by index, each with its latest attempt (0 or 1 in `attempts`). */
export type StepJob = Job & { tasks: Array<Task & { attempts: Attempt[] }> };

/**
 * The job, its tasks by index and each task's latest attempt, as `to_jsonb` rows in one row: one
 * statement where Prisma's include sent three, and one text, so that PGlite keeps it prepared
 * (prepared.ts). A step reads it for every decision of every job.
 */
const STEP_SQL = `SELECT to_jsonb(j.*) AS "job",
  COALESCE((SELECT jsonb_agg(jsonb_build_object('task', to_jsonb(t.*),
      'attempt', (SELECT to_jsonb(a.*) FROM "Attempt" a WHERE a."taskId" = t."id" ORDER BY a."number" DESC LIMIT 1)) ORDER BY t."index")
    FROM "Task" t WHERE t."jobId" = j."id"), '[]'::jsonb) AS "tasks"
  FROM "Job" j WHERE j."id" = $1::int`;

/**
 * Job `id` with its tasks (by index) and each task's latest attempt, in one read; null when gone.
 * Rows decoded by the column table (columns.ts) exactly as Prisma reads them
 * (tests/integration/store-step.test.ts).
 */
export async function stepJob(store: StoreScope, id: number): Promise<StepJob | null> {
  const rows = await queryPrepared<{ job: Record<string, unknown>; tasks: Array<{ task: Record<string, unknown>; attempt: Record<string, unknown> | null }> }>(
    store.prisma,
    store.prepared,
    STEP_SQL,
    [id],
  );
  if (rows.length === 0) return null;
  const cols = store.columns;
  const job = decodeRow<Job>(cols.job, rows[0].job);
  const tasks = rows[0].tasks.map(({ task, attempt }) => ({ ...decodeRow<Task>(cols.task, task), attempts: attempt ? [decodeRow<Attempt>(cols.attempt, attempt)] : [] }));
  return { ...job, tasks };
}

/** A job the reconcile pass follows: its id, and whether a cancel of it is under way. */
export interface FollowedJob {
  id: number;
  cancel: boolean;
}

/** The terminal statuses as SQL literals (constants, not input). */
const TERMINAL_SQL = [...JOB_TERMINAL].map((s) => `'${s}'`).join(', ');

/**
 * The non-terminal jobs that are admitted (not PENDING) or have a cancel request, ascending by
 * id; `cancel` when the job is CANCELLING or has a cancel request. `owner` (leases on,
 * docs/design.md "Replicas"): only the jobs that server owns; null: every one. One row with the
 * ids as two arrays: the reconcile pass reads every followed job each second, and a row per job
 * (1,000 with 1,000 running) was the largest read of a steady server.
 */
export async function followedJobs(store: StoreScope, owner: string | null): Promise<FollowedJob[]> {
  const rows = await queryPrepared<{ ids: number[] | null; cancel: number[] | null }>(
    store.prisma,
    store.prepared,
    `SELECT array_agg("id" ORDER BY "id") AS "ids",
            array_agg("id" ORDER BY "id") FILTER (WHERE "status" = 'CANCELLING' OR "cancelRequestedAt" IS NOT NULL) AS "cancel"
       FROM "Job"
      WHERE "status" NOT IN (${TERMINAL_SQL}) AND ("status" <> 'PENDING' OR "cancelRequestedAt" IS NOT NULL)${owner === null ? '' : ' AND "ownerId" = $1::text'}`,
    owner === null ? [] : [owner],
  );
  const cancel = new Set(rows[0]?.cancel ?? []);
  return (rows[0]?.ids ?? []).map((id) => ({ id, cancel: cancel.has(id) }));
}
