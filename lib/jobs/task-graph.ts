/**
 * The tasks of one job as a graph (docs/design.md §17 "Task graphs and job groups"): which tasks
 * may run now, which can never run, and when a job group's end is decided while some of its
 * tasks still run. Pure: the monitor's dispatcher (lib/monitor/monitor.ts) and the one job-status
 * rule (deriveJobStatus, lib/jobs/status.ts) both read it, so the two never disagree.
 *
 * Three shapes, one rule:
 * - a pipeline (SkyPilot's chain DAG): task i starts after task i-1 — a task without `after`;
 * - an in-job DAG (`depends_on: {tasks: [...]}`): a task starts once every task it names
 *   SUCCEEDED, so independent tasks run side by side;
 * - a job group (SkyPilot's `execution: parallel`): every task has `after: []` and starts with
 *   the job; `primary` marks the tasks whose end ends the group.
 */
/**
 * The live task statuses (TASK_TRANSITIONS' non-terminal rows, held to them by
 * tests/unit/task-graph.test.ts): this module imports nothing, so status.ts may import it.
 */
export const LIVE_TASK_STATUSES: readonly string[] = ['PENDING', 'STARTING', 'RUNNING', 'RECOVERING', 'CANCELLING'];
const LIVE: ReadonlySet<string> = new Set(LIVE_TASK_STATUSES);
const ended = (s: string): boolean => !LIVE.has(s);

/** What the graph rule needs of a task: its index, status and, when stored, its edges and role. */
export interface GraphTask {
  index: number;
  /** A task status (lib/jobs/status.ts TaskStatus). */
  status: string;
  /** Indexes of the tasks it starts after; absent: the previous task (a pipeline). */
  after?: readonly number[];
  /** A primary task of a job group (SkyPilot's `primary_tasks`). */
  primary?: boolean;
}

/** The graph's state for one read of a job's tasks. */
export interface GraphState {
  /** Tasks not terminal and not blocked, by index. */
  live: number[];
  /** PENDING tasks that can never start: a task they wait for ended without succeeding. */
  blocked: number[];
  /** Tasks the monitor steps now: live and started, or PENDING with every awaited task SUCCEEDED. */
  ready: number[];
  /**
   * Why the job's end is decided while tasks are live (a task failed or was cancelled, or every
   * primary task ended); null while it is not.
   */
  decided: string | null;
  /** Live tasks to stop because the end is decided (non-primaries once the primaries ended). */
  stop: number[];
}

/** The tasks `t` starts after: its stored `after`, else the previous task (a pipeline's chain). */
export function afterOf(t: Pick<GraphTask, 'index' | 'after'>): readonly number[] {
  return t.after ?? (t.index > 0 ? [t.index - 1] : []);
}

/** True when some task of the job is a primary task (the group ends with them). */
export function hasPrimaries(tasks: readonly GraphTask[]): boolean {
  return tasks.some((t) => t.primary === true);
}

/** The graph's state (see {@link GraphState}); tasks in any order, edges to unknown indexes ignored. */
export function graphState(tasks: readonly GraphTask[]): GraphState {
  const byIndex = new Map(tasks.map((t) => [t.index, t]));
  const ordered = [...tasks].sort((a, b) => a.index - b.index);
  const blocked = new Set<number>();
  // A fixpoint: blocking spreads along the edges (at most one round per task).
  for (let round = 0, changed = true; changed && round <= ordered.length; round++) {
    changed = false;
    for (const t of ordered) {
      if (t.status !== 'PENDING' || blocked.has(t.index)) continue;
      const dead = afterOf(t).some((i) => {
        const d = byIndex.get(i);
        return d !== undefined && (blocked.has(i) || (ended(d.status) && d.status !== 'SUCCEEDED'));
      });
      if (dead) {
        blocked.add(t.index);
        changed = true;
      }
    }
  }
  const live = ordered.filter((t) => !ended(t.status) && !blocked.has(t.index));
  const ready = live.filter((t) => t.status !== 'PENDING' || afterOf(t).every((i) => byIndex.get(i)?.status === 'SUCCEEDED' || !byIndex.has(i)));
  const over = ordered.find((t) => ended(t.status) && t.status !== 'SUCCEEDED');
  const primaries = ordered.filter((t) => t.primary === true);
  let decided: string | null = null;
  if (over) decided = `task ${over.index} ended ${over.status}`;
  else if (primaries.length > 0 && primaries.every((t) => ended(t.status))) decided = primaries.length === 1 ? `primary task ${primaries[0].index} ended` : 'the primary tasks ended';
  return {
    live: live.map((t) => t.index),
    blocked: [...blocked].sort((a, b) => a - b),
    ready: ready.map((t) => t.index),
    decided,
    stop: decided === null ? [] : live.map((t) => t.index),
  };
}

/**
 * The outcome of a job none of whose tasks is live, or null while one is (docs/design.md §3):
 * every task SUCCEEDED — or, in a group with primary tasks, every primary SUCCEEDED and no task
 * failed (the others were stopped, SkyPilot's auxiliary tasks) → SUCCEEDED; else the first failed
 * task's failure; else CANCELLED.
 */
export function graphOutcome(tasks: readonly GraphTask[]): string | null {
  const ordered = [...tasks].sort((a, b) => a.index - b.index);
  if (graphState(ordered).live.length > 0) return null;
  const failed = ordered.find((t) => ended(t.status) && t.status !== 'SUCCEEDED' && t.status !== 'CANCELLED');
  if (failed) return failed.status;
  const counted = hasPrimaries(ordered) ? ordered.filter((t) => t.primary === true) : ordered;
  if (counted.every((t) => t.status === 'SUCCEEDED')) return 'SUCCEEDED';
  return 'CANCELLED';
}

/** Reads the graph part of a stored task spec (Task.spec: `after`, `primary`); tolerant of old rows. */
export function graphPartOf(spec: unknown): Pick<GraphTask, 'after' | 'primary'> {
  const s = (spec && typeof spec === 'object' ? spec : {}) as { after?: unknown; primary?: unknown };
  const out: Pick<GraphTask, 'after' | 'primary'> = {};
  if (Array.isArray(s.after) && s.after.every((i) => Number.isInteger(i))) out.after = s.after as number[];
  if (s.primary === true) out.primary = true;
  return out;
}
