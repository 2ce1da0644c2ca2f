/**
 * `jobdeck queue` rendering, after SkyPilot's `sky jobs queue` (sky/jobs/utils.py
 * format_job_table; docs/cli.md): columns ID, TASK, NAME, SUBMITTED, TOT. DURATION,
 * JOB DURATION, #RESTARTS, PRIORITY, STATUS, and WAITING (why a PENDING job waits, short form). A one-task job is one row (TASK `-`); a pipeline is its job
 * row (TASK empty) followed by one indented sub-row per task (` ↳` in ID, the task index in TASK).
 * Pure: the clock and colours are parameters.
 */
import Table from 'cli-table3';
import type { JobSummary, TaskSummary } from '../api/types';
import { waitingText } from '../jobs/waiting';
import { colorStatus, type Colors, colors as makeColors, formatAgo, formatDuration } from './format';

/** The column headers, in order. */
export const QUEUE_COLUMNS = ['ID', 'TASK', 'NAME', 'SUBMITTED', 'TOT. DURATION', 'JOB DURATION', '#RESTARTS', 'PRIORITY', 'STATUS', 'WAITING', 'OWNER'] as const;

/** One table row as strings (STATUS possibly coloured). */
export type QueueRow = [string, string, string, string, string, string, string, string, string, string, string];

function ms(from: string | null, to: string | null, now: Date): number | null {
  if (!from) return null;
  const end = to ? new Date(to).getTime() : now.getTime();
  // Clocks of different writers may put an end a few ms before its start: that is 0, not "-".
  return Math.max(0, end - new Date(from).getTime());
}

/** Restarts as `n` or `n (+r recovered)` when the executor lost attempts too. */
function restartsCell(restarts: number, recoveries: number): string {
  return recoveries > 0 ? `${restarts} (+${recoveries} recov.)` : String(restarts);
}

function taskRow(job: JobSummary, t: TaskSummary, now: Date, c: Colors): QueueRow {
  return [
    ' ↳',
    String(t.index),
    t.name ?? '-',
    formatAgo(job.submittedAt, now),
    // A task's total duration: from the job's submission to the task's end (SkyPilot's choice).
    t.startedAt ? formatDuration(ms(job.submittedAt, t.endedAt, now)) : '-',
    formatDuration(ms(t.startedAt, t.endedAt, now)),
    restartsCell(t.restarts, t.recoveries),
    '',
    colorStatus(t.status, c),
    '',
    '',
  ];
}

/** The rows of the queue table for `jobs` (newest first as given). */
export function queueRows(jobs: readonly JobSummary[], now: Date = new Date(), c: Colors = makeColors(false)): QueueRow[] {
  const rows: QueueRow[] = [];
  for (const j of jobs) {
    const pipeline = j.tasks.length > 1;
    rows.push([
      String(j.id),
      pipeline ? '' : '-',
      j.name,
      formatAgo(j.submittedAt, now),
      formatDuration(j.totalDurationMs),
      formatDuration(j.jobDurationMs),
      restartsCell(j.restartCount, j.recoveryCount),
      String(j.priority),
      colorStatus(j.status, c),
      j.status === 'PENDING' || j.pendingReason ? waitingText(j.pendingReason, true) : '',
      j.owner ?? '-',
    ]);
    if (pipeline) for (const t of [...j.tasks].sort((a, b) => a.index - b.index)) rows.push(taskRow(j, t, now, c));
  }
  return rows;
}

/** The queue as aligned plain columns (no borders), header first. */
export function renderQueueTable(jobs: readonly JobSummary[], now: Date = new Date(), c: Colors = makeColors(false)): string {
  const table = new Table({
    head: [...QUEUE_COLUMNS],
    chars: {
      top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
      bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
      left: '', 'left-mid': '', mid: '', 'mid-mid': '',
      right: '', 'right-mid': '', middle: '  ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true },
  });
  for (const r of queueRows(jobs, now, c)) table.push(r);
  return table
    .toString()
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''))
    .join('\n');
}

/** The machine-readable queue (`--json`): the API's JobSummary objects, as they are. */
export function queueJson(jobs: readonly JobSummary[]): string {
  return JSON.stringify(jobs, null, 2);
}
