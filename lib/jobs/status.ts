/**
 * The status machine of jobdeck: every status of a job, a task and an attempt, the terminal
 * sets, and the table of allowed transitions. This module is the one place that owns these
 * rules; the guarded store (lib/store/transition.ts) refuses any transition not listed here
 * before it touches the database (docs/design.md §3, "State machines").
 *
 * A job runs one or more tasks in order (a pipeline); an attempt is one run of one task (words:
 * docs/design.md §2). Job statuses follow SkyPilot's managed-job statuses (sky/jobs/state.py
 * ManagedJobStatus); "nothing ever leaves a terminal state".
 */

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

export const JOB_TERMINAL: ReadonlySet<JobStatus> = new Set<JobStatus>([
  'SUCCEEDED',
  'CANCELLED',
  'FAILED',
  'FAILED_SETUP',
  'FAILED_PRECHECKS',
  'FAILED_NO_RESOURCE',
  'FAILED_CONTROLLER',
]);
export const TASK_TERMINAL: ReadonlySet<TaskStatus> = new Set<TaskStatus>([
  'SUCCEEDED',
  'CANCELLED',
  'FAILED',
  'FAILED_SETUP',
  'FAILED_PRECHECKS',
  'FAILED_NO_RESOURCE',
  'FAILED_CONTROLLER',
]);
export const ATTEMPT_TERMINAL: ReadonlySet<AttemptStatus> = new Set<AttemptStatus>([
  'SUCCEEDED',
  'FAILED',
  'FAILED_SETUP',
  'CANCELLED',
  'LOST',
]);

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

/** The minimum a task needs to show for the job-status rule. */
export interface TaskStatusView {
  index: number;
  status: TaskStatus;
}

/**
 * The one rule that derives a job's status from its tasks (used by the monitor, the API, the
 * CLI and the dashboard). In order:
 * 1. every task SUCCEEDED → SUCCEEDED;
 * 2. a task ended in a failure (FAILED, FAILED_SETUP, FAILED_PRECHECKS, FAILED_NO_RESOURCE, FAILED_CONTROLLER) →
 *    that failure (the first such task in pipeline order);
 * 3. a task CANCELLED → CANCELLED;
 * 4. a cancel was requested, or a task is CANCELLING → CANCELLING;
 * 5. otherwise the job mirrors its current task (the first one not SUCCEEDED): PENDING →
 *    PENDING for the first task and RUNNING between tasks; STARTING, RUNNING and RECOVERING as is.
 * An empty task list is a job that has nothing to run: SUCCEEDED.
 */
export function deriveJobStatus(tasks: readonly TaskStatusView[], opts: { cancelRequested?: boolean } = {}): JobStatus {
  const ordered = [...tasks].sort((a, b) => a.index - b.index);
  if (ordered.every((t) => t.status === 'SUCCEEDED')) return 'SUCCEEDED';
  const failed = ordered.find((t) => t.status === 'FAILED' || t.status === 'FAILED_SETUP' || t.status === 'FAILED_PRECHECKS' || t.status === 'FAILED_NO_RESOURCE' || t.status === 'FAILED_CONTROLLER');
  if (failed) return failed.status as JobStatus;
  if (ordered.some((t) => t.status === 'CANCELLED')) return 'CANCELLED';
  if (opts.cancelRequested || ordered.some((t) => t.status === 'CANCELLING')) return 'CANCELLING';
  const current = ordered.find((t) => t.status !== 'SUCCEEDED')!;
  if (current.status === 'PENDING') return ordered[0] === current ? 'PENDING' : 'RUNNING';
  return current.status as JobStatus;
}
