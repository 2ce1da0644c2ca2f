/**
 * The status machine of jobdeck: every status of a job, a task and an attempt, the terminal
 * sets, and the table of allowed transitions. This module is the one place that owns these
 * rules; the guarded store (lib/store/transition.ts) refuses any transition not listed here
 * before it touches the database (docs/design.md §3, "State machines").
 *
 * A job runs one or more tasks in order (a pipeline), as a DAG or side by side (a job group:
 * lib/jobs/task-graph.ts); an attempt is one run of one task (words:
 * docs/design.md §2). Job statuses follow SkyPilot's managed-job statuses (sky/jobs/state.py
 * ManagedJobStatus); "nothing ever leaves a terminal state".
 */
import { graphOutcome, graphState } from './task-graph';

/** All job statuses. Must match `enum JobStatus` in prisma/schema.prisma (checked by a test). */
export const JOB_STATUSES = [
  'PENDING',
  'STARTING',
  'RUNNING',
  'RECOVERING',
  'CANCELLING',
  'SUCCEEDED',
  'CANCELLED',
  'FAILED',
  'FAILED_SETUP',
  'FAILED_PRECHECKS',
  'FAILED_NO_RESOURCE',
  'FAILED_CONTROLLER',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** All task statuses. Must match `enum TaskStatus` in prisma/schema.prisma. */
export const TASK_STATUSES = [
  'PENDING',
  'STARTING',
  'RUNNING',
  'RECOVERING',
  'CANCELLING',
  'SUCCEEDED',
  'CANCELLED',
  'FAILED',
  'FAILED_SETUP',
  'FAILED_PRECHECKS',
  'FAILED_NO_RESOURCE',
  'FAILED_CONTROLLER',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/**
 * All attempt statuses. Must match `enum AttemptStatus`. `LOST` means the executor lost the
 * attempt (process vanished with no recorded exit status, Slurm NODE_FAIL/PREEMPTED): it leads
 * to a recovery, which does not spend the user's restart budget.
 */
export const ATTEMPT_STATUSES = [
  'STARTING',
  'RUNNING',
  'CANCELLING',
  'SUCCEEDED',
  'FAILED',
  'FAILED_SETUP',
  'CANCELLED',
  'LOST',
] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** The kinds of row that carry a status. */
export type Entity = 'job' | 'task' | 'attempt';
/** Status type of each entity. */
export type StatusOf<E extends Entity> = E extends 'job' ? JobStatus : E extends 'task' ? TaskStatus : AttemptStatus;

/** Any status of a job, a task or an attempt (the three share their names' meanings). */
export type AnyStatus = JobStatus | TaskStatus | AttemptStatus;

/**
 * What a status says about the end of its job, task or attempt: `live` (not ended yet) or how
 * it ended. `lost` is an attempt the executor lost (it leads to a recovery, not a failure).
 */
export type Outcome = 'live' | 'succeeded' | 'failed' | 'cancelled' | 'lost';

/**
 * THE classification of every status: a new status gets its row here (tsc insists), and the
 * terminal and failed sets below follow from it. Per-status choices elsewhere (exit code, badge
 * tone, colour…) are `Record<…Status, …>` tables, so tsc names each one a new status must fill.
 */
export const STATUS_OUTCOME = {
  PENDING: 'live',
  STARTING: 'live',
  RUNNING: 'live',
  RECOVERING: 'live',
  CANCELLING: 'live',
  SUCCEEDED: 'succeeded',
  CANCELLED: 'cancelled',
  FAILED: 'failed',
  FAILED_SETUP: 'failed',
  FAILED_PRECHECKS: 'failed',
  FAILED_NO_RESOURCE: 'failed',
  FAILED_CONTROLLER: 'failed',
  LOST: 'lost',
} as const satisfies { readonly [S in AnyStatus]: Outcome };

/** The statuses whose outcome is `live`. */
type LiveStatus = { [S in keyof typeof STATUS_OUTCOME]: (typeof STATUS_OUTCOME)[S] extends 'live' ? S : never }[keyof typeof STATUS_OUTCOME];
/** A job status nothing leaves (a status missing from STATUS_OUTCOME counts as one, so tsc names its tables too). */
export type TerminalJobStatus = Exclude<JobStatus, LiveStatus>;

/** The statuses of `all` whose outcome is one of `outcomes`, in `all`'s order. */
function withOutcome<S extends AnyStatus>(all: readonly S[], ...outcomes: Outcome[]): ReadonlySet<S> {
  return new Set(all.filter((s) => outcomes.includes(STATUS_OUTCOME[s])));
}

const ENDED: Outcome[] = ['succeeded', 'failed', 'cancelled', 'lost'];
export const JOB_TERMINAL: ReadonlySet<JobStatus> = withOutcome(JOB_STATUSES, ...ENDED);
export const TASK_TERMINAL: ReadonlySet<TaskStatus> = withOutcome(TASK_STATUSES, ...ENDED);
export const ATTEMPT_TERMINAL: ReadonlySet<AttemptStatus> = withOutcome(ATTEMPT_STATUSES, ...ENDED);

/**
 * The "failed" group: every job status that is a failure (FAILED, FAILED_SETUP, FAILED_PRECHECKS,
 * FAILED_NO_RESOURCE, FAILED_CONTROLLER) — the jobs list's "Failed" chip, the `job.failed`
 * webhook, the failure a job takes from its first failed task (deriveJobStatus).
 */
export const JOB_FAILED: ReadonlySet<JobStatus> = withOutcome(JOB_STATUSES, 'failed');
/** The task statuses that are failures (the same names as JOB_FAILED). */
export const TASK_FAILED: ReadonlySet<TaskStatus> = withOutcome(TASK_STATUSES, 'failed');

/** Failures caused by the user's own code; these trigger a restart decision (SkyPilot's retry each task). */
export const USER_FAILURES: ReadonlySet<string> = new Set(['FAILED', 'FAILED_SETUP']);

type Table<S extends string> = { readonly [K in S]: readonly S[] };

/**
 * Allowed job transitions. Job: PENDING → STARTING → RUNNING → (RECOVERING → STARTING →
 * RUNNING)* → terminal; RUNNING → STARTING when a restart or the next task is launching;
 * CANCELLING reachable from every non-terminal status; terminal statuses have no way out.
 */
export const JOB_TRANSITIONS: Table<JobStatus> = {
  PENDING: ['STARTING', 'RUNNING', 'CANCELLING', 'CANCELLED', 'SUCCEEDED', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'],
  STARTING: ['RUNNING', 'RECOVERING', 'CANCELLING', 'CANCELLED', 'SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'],
  RUNNING: ['STARTING', 'RECOVERING', 'CANCELLING', 'CANCELLED', 'SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'],
  RECOVERING: ['STARTING', 'RUNNING', 'CANCELLING', 'CANCELLED', 'SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'],
  CANCELLING: ['CANCELLED', 'FAILED_CONTROLLER'],
  SUCCEEDED: [],
  CANCELLED: [],
  FAILED: [],
  FAILED_SETUP: [],
  FAILED_PRECHECKS: [],
  FAILED_NO_RESOURCE: [],
  FAILED_CONTROLLER: [],
};

/**
 * Allowed task transitions. RUNNING → STARTING is a restart (after FAILED/FAILED_SETUP of an
 * attempt with budget left); RUNNING → RECOVERING → STARTING is a recovery.
 */
export const TASK_TRANSITIONS: Table<TaskStatus> = {
  PENDING: ['STARTING', 'CANCELLED', 'SUCCEEDED', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'],
  STARTING: ['RUNNING', 'RECOVERING', 'CANCELLING', 'CANCELLED', 'SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'],
  RUNNING: ['STARTING', 'RECOVERING', 'CANCELLING', 'CANCELLED', 'SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'FAILED_CONTROLLER'],
  RECOVERING: ['STARTING', 'RUNNING', 'CANCELLING', 'CANCELLED', 'SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'],
  CANCELLING: ['CANCELLED', 'FAILED_CONTROLLER'],
  SUCCEEDED: [],
  CANCELLED: [],
  FAILED: [],
  FAILED_SETUP: [],
  FAILED_PRECHECKS: [],
  FAILED_NO_RESOURCE: [],
  FAILED_CONTROLLER: [],
};

/** Allowed attempt transitions. */
export const ATTEMPT_TRANSITIONS: Table<AttemptStatus> = {
  STARTING: ['RUNNING', 'CANCELLING', 'SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'CANCELLED', 'LOST'],
  RUNNING: ['CANCELLING', 'SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'CANCELLED', 'LOST'],
  CANCELLING: ['CANCELLED', 'LOST'],
  SUCCEEDED: [],
  FAILED: [],
  FAILED_SETUP: [],
  CANCELLED: [],
  LOST: [],
};

const TABLES = { job: JOB_TRANSITIONS, task: TASK_TRANSITIONS, attempt: ATTEMPT_TRANSITIONS } as const;
const TERMINALS = { job: JOB_TERMINAL, task: TASK_TERMINAL, attempt: ATTEMPT_TERMINAL } as const;
const ALL = { job: JOB_STATUSES, task: TASK_STATUSES, attempt: ATTEMPT_STATUSES } as const;

/** True when `status` is a terminal status of `entity` (nothing leaves it). */
export function isTerminal<E extends Entity>(entity: E, status: string): boolean {
  return (TERMINALS[entity] as ReadonlySet<string>).has(status);
}

/** True when `status` is a known status of `entity`. */
export function isStatus<E extends Entity>(entity: E, status: string): status is StatusOf<E> {
  return (ALL[entity] as readonly string[]).includes(status);
}

/** True when the table allows `from → to` for `entity`. `from === to` is never a transition. */
export function canTransition<E extends Entity>(entity: E, from: string, to: string): boolean {
  const row = (TABLES[entity] as Record<string, readonly string[]>)[from];
  return !!row && row.includes(to);
}

/** Thrown when code asks for a transition the table does not allow. Nothing was written. */
export class IllegalTransitionError extends Error {
  constructor(
    readonly entity: Entity,
    readonly from: string,
    readonly to: string,
  ) {
    super(`illegal ${entity} transition ${from} → ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

/** Throws IllegalTransitionError unless `from → to` is allowed for `entity`. */
export function assertTransition(entity: Entity, from: string, to: string): void {
  if (!canTransition(entity, from, to)) throw new IllegalTransitionError(entity, from, to);
}

/**
 * The minimum a task needs to show for the job-status rule; `after` / `primary` are its place in
 * the job's task graph (lib/jobs/task-graph.ts; absent: a pipeline's chain).
 */
export interface TaskStatusView {
  index: number;
  status: TaskStatus;
  after?: readonly number[];
  primary?: boolean;
}

/**
 * The one rule that derives a job's status from its tasks (used by the monitor, the API, the
 * CLI and the dashboard). A task is *live* when it is not terminal and can still start (a PENDING
 * task waiting for a task that ended without succeeding never will: lib/jobs/task-graph.ts). In
 * order:
 * 1. every task SUCCEEDED → SUCCEEDED;
 * 2. no task live → the outcome (graphOutcome): the first task that ended in a failure
 *    (TASK_FAILED) → that failure; else, in a job group with primary tasks, every primary
 *    SUCCEEDED → SUCCEEDED (the others were stopped); else CANCELLED;
 * 3. a cancel was requested, or a task is CANCELLING → CANCELLING;
 * 4. otherwise the job mirrors its first live task that started (STARTING, RUNNING, RECOVERING
 *    as is); when none started, PENDING while no task ever started, else RUNNING (between tasks).
 * In a pipeline this is the first task not SUCCEEDED; in a group or DAG a task's failure ends the
 * job only once its other tasks were stopped (docs/design.md §17).
 * An empty task list is a job that has nothing to run: SUCCEEDED.
 */
export function deriveJobStatus(tasks: readonly TaskStatusView[], opts: { cancelRequested?: boolean } = {}): JobStatus {
  const ordered = [...tasks].sort((a, b) => a.index - b.index);
  if (ordered.every((t) => t.status === 'SUCCEEDED')) return 'SUCCEEDED';
  const outcome = graphOutcome(ordered);
  if (outcome !== null) return outcome as JobStatus;
  if (opts.cancelRequested || ordered.some((t) => t.status === 'CANCELLING')) return 'CANCELLING';
  const live = new Set(graphState(ordered).live);
  const started = ordered.find((t) => live.has(t.index) && t.status !== 'PENDING');
  if (started) return started.status as JobStatus;
  return ordered.every((t) => t.status === 'PENDING') ? 'PENDING' : 'RUNNING';
}
