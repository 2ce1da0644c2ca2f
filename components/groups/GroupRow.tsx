'use client';
/**
 * A group's one row in the jobs list (docs/design.md §17 "Groups"): its name and size, a progress
 * bar of its slots by status, counts, and Cancel group — opening to its page (/groups/ID). Its
 * counts come with the list page and are read again every 2 s while a job of it is live (the
 * list stream carries one job at a time, not the group).
 */
import Link from 'next/link';
import type { GroupSummary } from '@/lib/api/types';
import type { JobStatus } from '@/lib/jobs/status';
import { JOB_STATUSES } from '@/lib/jobs/status';
import { groupLive, useGroup } from '@/lib/ui/flow-hooks';
import { statusTone } from '@/lib/ui/format';
import { ConfirmButton } from '../ConfirmButton';
import { RelativeTime } from '../Time';

/** The group's slots as a bar: one segment per status, as wide as its count. */
export function GroupProgress({ g }: { g: Pick<GroupSummary, 'id' | 'size' | 'done' | 'counts'> }) {
  const parts = JOB_STATUSES.filter((s) => (g.counts[s] ?? 0) > 0);
  const title = parts.map((s) => `${g.counts[s]} ${s}`).join(', ');
  return (
    <span className="progress" title={title} data-testid={`group-progress-${g.id}`}>
      <span className="task-segs group-segs" aria-hidden="true">
        {parts.map((s) => (
          <span key={s} className={`tone-${statusTone(s)}`} style={{ flexGrow: g.counts[s] }} data-status={s} data-count={g.counts[s]} />
        ))}
      </span>
      <span className="progress-text" data-testid={`group-done-${g.id}`}>
        {g.done}/{g.size}
      </span>
    </span>
  );
}

/** Counts as words: "3 RUNNING · 12 PENDING · 1 FAILED". */
export function countsText(counts: Partial<Record<JobStatus, number>>): string {
  return JOB_STATUSES.filter((s) => (counts[s] ?? 0) > 0)
    .map((s) => `${counts[s]} ${s}`)
    .join(' · ');
}

export function GroupRow({ group, now, onCancel, busy }: { group: GroupSummary; now: number; onCancel: (id: number) => void; busy: boolean }) {
  const live = useGroup(group.id);
  const g = live.data ?? group;
  return (
    <tr data-group-id={g.id} data-testid={`group-row-${g.id}`} className="group-row">
      <td className="col-check" />
      <td className="col-id">
        <Link href={`/groups/${g.id}`}>G{g.id}</Link>
      </td>
      <td className="col-name">
        <Link href={`/groups/${g.id}`}>{g.name}</Link> <span className="faint">· group of {g.size}</span>
        <span className="reason" data-testid={`group-counts-${g.id}`}>
          {countsText(g.counts)}
        </span>
      </td>
      <td className="hide-sm">
        <GroupProgress g={g} />
      </td>
      <td className="col-status">{groupLive(g) ? 'running' : 'done'}</td>
      <td className="hide-sm">
        <RelativeTime iso={g.submittedAt} now={now} />
      </td>
      <td className="hide-sm" />
      <td className="col-num hide-sm" />
      <td className="col-actions">
        {groupLive(g) && (
          <span data-testid={`group-cancel-${g.id}`}>
            <ConfirmButton className="btn btn-ghost btn-sm" confirmLabel="Cancel all its jobs?" disabled={busy} onConfirm={() => onCancel(g.id)}>
              Cancel group
            </ConfirmButton>
          </span>
        )}
      </td>
    </tr>
  );
}
