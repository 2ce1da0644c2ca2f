/**
 * Job-level dependencies (docs/design.md §18 "Dependencies", docs/spec.md "depends_on"): when a
 * dependent may start, when it never can, and how its wait reads. Pure: the monitor's dependency
 * system (lib/monitor/dependencies.ts) and the submit (lib/control/dependencies.ts) decide with it.
 *
 * The modes are Slurm's: `ok` = afterok (every job SUCCEEDED), `failed` = afternotok (every job
 * ended otherwise — FAILED_*, CANCELLED), `any` = afterany (every job ended).
 */
import type { AfterMode } from './spec/flow';
import { isTerminal } from './status';

/** One edge as the decision sees it: the job waited for, its status now (null: its row is gone). */
export interface DependencyState {
  onJobId: number;
  after: AfterMode;
  status: string | null;
}

/** What a dependent's dependencies say now. */
export type DependencyVerdict =
  /** Every one is met: it may join its executor's line. */
  | { kind: 'met' }
  /** One can never be met: it ends CANCELLED with `reason`. */
  | { kind: 'never'; reason: string }
  /** Still waiting: `reason` is its pending reason. */
  | { kind: 'wait'; reason: string };

const WANTS: Record<AfterMode, string> = { ok: 'succeed', failed: 'fail', any: 'end' };

/** True when the edge's job ended the way its mode waits for. */
function met(d: DependencyState): boolean {
  if (d.status === null || !isTerminal('job', d.status)) return false;
  if (d.after === 'any') return true;
  return d.after === 'ok' ? d.status === 'SUCCEEDED' : d.status !== 'SUCCEEDED';
}

/** The reason an edge can never be met, or null (it is met, or may still be). */
function neverReason(d: DependencyState): string | null {
  if (d.status === null) return d.after === 'any' ? null : `job ${d.onJobId} was deleted before it was seen to ${WANTS[d.after]}; this job waited for it to ${WANTS[d.after]} (after: ${d.after})`;
  if (!isTerminal('job', d.status) || met(d)) return null;
  return `job ${d.onJobId} ended ${d.status}; this job waited for it to ${WANTS[d.after]} (after: ${d.after})`;
}

/**
 * The verdict over all of a job's edges: `never` as soon as one edge cannot be met (Slurm's
 * DependencyNeverSatisfied, which jobdeck ends instead of keeping), `met` when all are, else
 * `wait` naming the first job still running — "waits for job 41 to succeed" (and "and 2 more").
 * A deleted job counts as ended for `any` (it was terminal: only terminal jobs are deleted).
 */
export function decideDependencies(deps: readonly DependencyState[]): DependencyVerdict {
  for (const d of deps) {
    const r = neverReason(d);
    if (r) return { kind: 'never', reason: r };
  }
  const open = deps.filter((d) => !(met(d) || (d.status === null && d.after === 'any')));
  if (open.length === 0) return { kind: 'met' };
  return { kind: 'wait', reason: waitReason(open) };
}

/** "waits for job 41 to succeed", "waits for jobs 41, 42 to end", "… and 3 more". */
export function waitReason(open: readonly Pick<DependencyState, 'onJobId' | 'after'>[]): string {
  const modes = new Set(open.map((d) => d.after));
  const shown = open.slice(0, 3).map((d) => d.onJobId);
  const more = open.length > shown.length ? ` and ${open.length - shown.length} more` : '';
  if (modes.size === 1) {
    const mode = open[0].after;
    return `waits for job${open.length > 1 ? 's' : ''} ${shown.join(', ')}${more} to ${WANTS[mode]}`;
  }
  return `waits for ${open
    .slice(0, 3)
    .map((d) => `job ${d.onJobId} to ${WANTS[d.after]}`)
    .join(', ')}${more}`;
}
