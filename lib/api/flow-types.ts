/**
 * The API's answers about groups and schedules (docs/design.md §17 "Groups", §19 "Schedules"),
 * part of the contract lib/api/types.ts re-exports. Browser-safe: types only.
 */
import type { JobStatus } from '../jobs/status';

/** A group of jobs — an array or sweep submitted together (docs/design.md §17 "Groups"). */
export interface GroupSummary {
  id: number;
  name: string;
  /** Its slots (jobs at submit). */
  size: number;
  /** The latest job of each slot counted by status (a re-run takes its slot's place). */
  counts: Partial<Record<JobStatus, number>>;
  /** Slots whose latest job is terminal. */
  done: number;
  /** Its first job (the folded list's row). */
  jobId: number;
  owner: string | null;
  submittedAt: string;
  /** What it was submitted with: copies per combination, and the parameters' values. */
  array: { numJobs: number; params: Record<string, string[]> };
}

/** GET /api/groups/:id: the group and the latest job of each slot. */
export interface GroupDetail extends GroupSummary {
  slots: Array<{ index: number; jobId: number; name: string; status: JobStatus; runs: number }>;
}

/** A schedule (docs/design.md §19 "Schedules"). */
export interface ScheduleView {
  id: number;
  name: string;
  owner: string | null;
  cron: string;
  timezone: string;
  /** The spec it submits (secrets masked); null when it re-runs a job. */
  specYaml: string | null;
  /** The job it re-runs at each fire; null when it has a spec. */
  jobId: number | null;
  overlap: 'skip' | 'allow' | 'cancel_previous';
  catchUp: 'last' | 'none';
  paused: boolean;
  nextFireAt: string | null;
  lastFireAt: string | null;
  lastJobId: number | null;
  lastOutcome: string | null;
  createdAt: string;
  /** The latest fires, newest first (in a schedule's own GET; empty in the list). */
  fires: ScheduleFireView[];
}

/** One fire of a schedule. */
export interface ScheduleFireView {
  fireAt: string;
  kind: 'cron' | 'catch_up' | 'manual';
  outcome: 'submitted' | 'skipped' | 'error';
  jobId: number | null;
  detail: string | null;
  at: string;
}
