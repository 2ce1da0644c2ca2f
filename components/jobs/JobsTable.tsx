'use client';
/**
 * The jobs table: one row per job (select box, id, name with its reason — for a PENDING job why it waits, short —, tasks — a segment per
 * task coloured by its status —, status,
 * submitted, duration, restarts, the row menu). The row the keyboard is on (`j` / `k`) is marked
 * `aria-current` and kept in view.
 */
import Link from 'next/link';
import { memo, useEffect, useRef } from 'react';
import type { GroupSummary, JobSummary, UserMe } from '@/lib/api/types';
import { placeText, waitingText } from '@/lib/jobs/waiting';
import { elapsedMs, formatDuration, statusTone } from '@/lib/ui/format';
import { jobPermissions, mayChangeAny } from '@/lib/ui/permissions';
import { StatusBadge } from '../StatusBadge';
import { Elapsed, RelativeTime } from '../Time';
import { RowMenu, type RowActions } from './RowMenu';
import { GroupRow } from '../groups/GroupRow';

/** "2 of 3 tasks succeeded — task 0 (prep): SUCCEEDED, task 1: FAILED, …" for a row's task segments. */
function tasksTitle(j: JobSummary): string {
  const each = j.tasks.map((t) => `task ${t.index}${t.name ? ` (${t.name})` : ''}: ${t.status}`);
  return `${j.tasksSucceeded} of ${j.taskCount} tasks succeeded — ${each.join(', ')}`;
}

const JobRow = memo(function JobRow({ j, checked, active, onToggle, actions, busy, now, viewer }: { j: JobSummary; checked: boolean; active: boolean; onToggle: (id: number) => void; actions: RowActions; busy: boolean; now: number; viewer: UserMe | null }) {
  const ref = useRef<HTMLTableRowElement>(null);
  const may = jobPermissions(viewer, j.owner);
  useEffect(() => {
    if (active) ref.current?.scrollIntoView({ block: 'nearest' });
  }, [active]);
  return (
    <tr ref={ref} aria-selected={checked} aria-current={active ? 'true' : undefined} data-job-id={j.id} className={active ? 'row-active' : undefined}>
      <td className="col-check">
        {/* Only a job the viewer may change can be selected for the selection's actions. */}
        {mayChangeAny(may) && <input type="checkbox" aria-label={`Select job ${j.id}`} checked={checked} onChange={() => onToggle(j.id)} />}
      </td>
      <td className="col-id">
        <Link prefetch={false} href={`/jobs/${j.id}`}>{j.id}</Link>
      </td>
      <td className="col-name">
        <Link prefetch={false} href={`/jobs/${j.id}`}>{j.name}</Link>
        {j.status === 'PENDING' || j.pendingReason ? (
          <span className="reason" data-testid="pending-reason" title={`${waitingText(j.pendingReason)} · priority ${j.priority}, queue ${j.queue}${j.place ? ` · ${placeText(j.place, j.queue)}` : ''}`}>
            {j.place && (
              <span className="place" data-testid="place">
                {placeText(j.place, j.queue, true)}
              </span>
            )}
            {waitingText(j.pendingReason, true)}
          </span>
        ) : (
          j.statusReason &&
          j.status !== 'SUCCEEDED' && (
            <span className="reason" title={j.statusReason}>
              {j.statusReason}
            </span>
          )
        )}
      </td>
      <td className="hide-sm">
        <span className="progress" title={tasksTitle(j)}>
          <span className="task-segs" aria-hidden="true" data-testid={`task-segs-${j.id}`}>
            {j.tasks.map((t) => (
              <span key={t.index} className={`tone-${statusTone(t.status)}`} data-task-status={t.status} />
            ))}
          </span>
          <span className="progress-text">
            {j.tasksSucceeded}/{j.taskCount}
          </span>
        </span>
      </td>
      <td className="col-status">
        <StatusBadge status={j.status} title={j.statusReason} />
      </td>
      <td className="hide-sm">
        <RelativeTime iso={j.submittedAt} now={now} />
      </td>
      <td className="hide-sm">
        {j.startedAt ? (
          <Elapsed start={j.startedAt} end={j.endedAt} now={now} />
        ) : (
          <span className="faint" title={`queued for ${formatDuration(elapsedMs(j.submittedAt, j.endedAt, now))}`}>
            —
          </span>
        )}
      </td>
      <td className="col-num hide-sm" title={j.recoveryCount || j.exitCodeRestartCount ? `${j.restartCount} restarts after errors, ${j.exitCodeRestartCount} on an exit code of recover_on_exit_codes, ${j.recoveryCount} recoveries` : undefined}>
        {j.restartCount}
        {j.exitCodeRestartCount || j.recoveryCount ? <span className="faint"> +{j.exitCodeRestartCount + j.recoveryCount}</span> : null}
      </td>
      <td className="col-actions">
        <RowMenu job={j} actions={actions} busy={busy} may={may} />
      </td>
    </tr>
  );
});

/** What the table body says when there are no rows to show. */
export type TableNote = 'loading' | 'no-match' | 'no-more' | null;

/**
 * The table; `selectable` the jobs on the page the viewer may change (the select-all box selects
 * those), `viewer` who is looking (each row's menu and select box are the viewer's); `groups`
 * the groups (arrays, sweeps) a folded list shows as one row each.
 */
export function JobsTable({ jobs, groups, onCancelGroup, selectable, selected, active, note, fetching, onToggle, onToggleAll, actions, busy, now, viewer }: { jobs: JobSummary[]; groups?: ReadonlyMap<number, GroupSummary>; onCancelGroup?: (id: number) => void; selectable: number[]; selected: ReadonlySet<number>; active: number | null; note: TableNote; fetching: boolean; onToggle: (id: number) => void; onToggleAll: () => void; actions: RowActions; busy: boolean; now: number; viewer: UserMe | null }) {
  const onPage = selectable.filter((id) => selected.has(id)).length;
  const all = selectable.length > 0 && onPage === selectable.length;
  const headerBox = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (headerBox.current) headerBox.current.indeterminate = onPage > 0 && !all;
  }, [onPage, all]);
  const message = note === 'loading' ? 'Loading jobs…' : note === 'no-match' ? 'No jobs match these filters.' : note === 'no-more' ? 'No more jobs.' : null;
  return (
    <div className="table-wrap">
      <table className="table jobs-table" aria-busy={fetching} data-testid="jobs-table">
        <caption className="visually-hidden">Jobs, newest first</caption>
        <thead>
          <tr>
            <th scope="col" className="col-check">
              {selectable.length > 0 && <input ref={headerBox} type="checkbox" aria-label="Select all jobs on this page" checked={all} onChange={onToggleAll} />}
            </th>
            <th scope="col" className="col-idh">ID</th>
            <th scope="col" className="col-nameh">Name</th>
            <th scope="col" className="hide-sm">Tasks</th>
            <th scope="col" className="col-statush">Status</th>
            <th scope="col" className="hide-sm">Submitted</th>
            <th scope="col" className="hide-sm">Duration</th>
            <th scope="col" className="col-num hide-sm">Restarts</th>
            <th scope="col" className="col-actions">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {message && (
            <tr>
              <td colSpan={9} className="muted">
                {message}
              </td>
            </tr>
          )}
          {jobs.map((j) => {
            // A folded list: a group (array, sweep) is one row where its first job would be.
            const g = j.group?.lead ? groups?.get(j.group.id) : undefined;
            if (g) return <GroupRow key={`g${g.id}`} group={g} now={now} busy={busy} onCancel={(id) => onCancelGroup?.(id)} />;
            return <JobRow key={j.id} j={j} checked={selected.has(j.id)} active={active === j.id} onToggle={onToggle} actions={actions} busy={busy} now={now} viewer={viewer} />;
          })}
        </tbody>
      </table>
    </div>
  );
}
