/**
 * `jobdeck queue` rendering, after SkyPilot's `sky jobs queue` (sky/jobs/utils.py
 * format_job_table; docs/cli.md): columns ID, TASK, NAME, SUBMITTED, TOT. DURATION,
 * JOB DURATION, #RESTARTS (by cause: `2 (+10 on exit code, +1 recov.)`), PRIORITY, STATUS, PLACE
 * (a PENDING job's place in line: `#3 · q2`), WAITING (why a PENDING job waits, short form), OWNER
 * and NODES (SkyPilot's node_names: where the task's latest attempt runs or ran). A one-task job is one row (TASK `-`); a pipeline is its job
 * row (TASK empty) followed by one indented sub-row per task (` ↳` in ID, the task index in TASK).
 * Pure: the clock and colours are parameters.
 */
import Table from 'cli-table3';
import type { GroupSummary, JobSummary, TaskSummary } from '../api/types';
import { JOB_STATUSES, type JobStatus } from '../jobs/status';
import { placeText, restartingText, waitingText } from '../jobs/waiting';
import { colorStatus, type Colors, colors as makeColors, formatAgo, formatDuration } from './format';

/** The column headers, in order. */
export const QUEUE_COLUMNS = ['ID', 'TASK', 'NAME', 'SUBMITTED', 'TOT. DURATION', 'JOB DURATION', '#RESTARTS', 'PRIORITY', 'STATUS', 'PLACE', 'WAITING', 'OWNER', 'NODES'] as const;

/** One table row as strings (STATUS possibly coloured). */
export type QueueRow = [string, string, string, string, string, string, string, string, string, string, string, string, string];

function ms(from: string | null, to: string | null, now: Date): number | null {
  if (!from) return null;
  const end = to ? new Date(to).getTime() : now.getTime();
  // Clocks of different writers may put an end a few ms before its start: that is 0, not "-".
  return Math.max(0, end - new Date(from).getTime());
}

/**
 * Restarts by cause: the user's failures counted against the budget (`n`), then, when there were
 * any, the restarts on a recover_on_exit_codes code and the recoveries (the executor lost an
 * attempt): `n (+e on exit code, +r recov.)`.
 */
export function restartsCell(restarts: number, exitCodeRestarts: number, recoveries: number): string {
  const more = [exitCodeRestarts > 0 ? `+${exitCodeRestarts} on exit code` : '', recoveries > 0 ? `+${recoveries} recov.` : ''].filter(Boolean);
  return more.length ? `${restarts} (${more.join(', ')})` : String(restarts);
}

/** A task's nodes (TaskSummary.nodeNames): `node1`, `node1,node2`, or `node1 +3` past two; `-` before one is known. */
export function nodesCell(t: TaskSummary | undefined): string {
  const n = t?.nodeNames ?? [];
  if (n.length === 0) return '-';
  return n.length <= 2 ? n.join(',') : `${n[0]} +${n.length - 1}`;
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
    restartsCell(t.restarts, t.exitCodeRestarts, t.recoveries),
    '',
    colorStatus(t.status, c),
    '',
    '',
    '',
    nodesCell(t),
  ];
}

/** A group's progress in one line: `[######--------------] 15/50 done · 10 RUNNING · 25 PENDING`. */
export function groupProgress(g: Pick<GroupSummary, 'size' | 'done' | 'counts'>, width = 20): string {
  const filled = g.size ? Math.round((g.done / g.size) * width) : 0;
  const parts = JOB_STATUSES.filter((st) => (g.counts[st] ?? 0) > 0).map((st) => `${g.counts[st]} ${st}`);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${g.done}/${g.size} done · ${parts.join(' · ')}`;
}

/** A group's row: ID `g41`, its name and size, its progress as the STATUS. */
function groupRow(g: GroupSummary, first: JobSummary, now: Date, c: Colors): QueueRow {
  const live = JOB_STATUSES.filter((st) => (g.counts[st] ?? 0) > 0 && !['SUCCEEDED', 'CANCELLED'].includes(st) && !st.startsWith('FAILED'));
  const lead: JobStatus | undefined = live.includes('RUNNING') ? 'RUNNING' : live[0];
  const status = `${g.done}/${g.size} done${lead ? ` · ${colorStatus(lead, c)} ${g.counts[lead]}` : ''}${(g.counts.FAILED ?? 0) > 0 ? ` · ${colorStatus('FAILED', c)} ${g.counts.FAILED}` : ''}`;
  return [`g${g.id}`, '-', `${g.name} (${g.size} jobs)`, formatAgo(g.submittedAt, now), '-', '-', '-', String(first.priority), status, '', '', g.owner ?? '-', '-'];
}

/**
 * The rows of the queue table for `jobs` (newest first as given). With `groups`, the jobs of a
 * group it holds are folded into the group's one row, where the newest of them stands.
 */
export function queueRows(jobs: readonly JobSummary[], now: Date = new Date(), c: Colors = makeColors(false), groups?: ReadonlyMap<number, GroupSummary>): QueueRow[] {
  const rows: QueueRow[] = [];
  const shown = new Set<number>();
  for (const j of jobs) {
    const g = j.group && groups?.get(j.group.id);
    if (g) {
      if (!shown.has(g.id)) rows.push(groupRow(g, j, now, c));
      shown.add(g.id);
      continue;
    }
    const pipeline = j.tasks.length > 1;
    rows.push([
      String(j.id),
      pipeline ? '' : '-',
      j.name,
      formatAgo(j.submittedAt, now),
      formatDuration(j.totalDurationMs),
      formatDuration(j.jobDurationMs),
      restartsCell(j.restartCount, j.exitCodeRestartCount, j.recoveryCount),
      String(j.priority),
      colorStatus(j.status, c),
      j.status === 'PENDING' ? placeText(j.place, j.queue, true) : '',
      j.status === 'PENDING' || j.pendingReason ? waitingText(j.pendingReason, true) : restartingText(j.nextAttemptAt, now, true),
      j.owner ?? '-',
      // A pipeline's row: the task it is on.
      nodesCell(j.tasks.find((t) => t.index === j.currentTask) ?? j.tasks[0]),
    ]);
    if (pipeline) for (const t of [...j.tasks].sort((a, b) => a.index - b.index)) rows.push(taskRow(j, t, now, c));
  }
  return rows;
}

/** The queue as aligned plain columns (no borders), header first. */
export function renderQueueTable(jobs: readonly JobSummary[], now: Date = new Date(), c: Colors = makeColors(false), groups?: ReadonlyMap<number, GroupSummary>): string {
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
  for (const r of queueRows(jobs, now, c, groups)) table.push(r);
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
