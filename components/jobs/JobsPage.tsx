'use client';
/**
 * The jobs list: newest first, status filter chips, name/ID search, keyset pagination through
 * the API cursor, live updates from the list stream (via the query cache), row actions (cancel,
 * delete) and bulk cancel. Shows how to launch a first job when there is none.
 */
import Link from 'next/link';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { JobSummary } from '@/lib/api/types';
import { canCancel, canDelete, elapsedMs, formatDuration } from '@/lib/ui/format';
import { useCancelJob, useCancelJobs, useDeleteJob, useJobList, useNow } from '@/lib/ui/hooks';
import type { ListFilter } from '@/lib/ui/list-cache';
import { ConfirmButton } from '../ConfirmButton';
import { StatusBadge } from '../StatusBadge';
import { Elapsed, RelativeTime } from '../Time';
import { EmptyState } from './EmptyState';

/** Filter chips: each maps to the statuses it shows. */
const GROUPS = [
  { id: 'all', label: 'All', statuses: [] as string[] },
  { id: 'active', label: 'Active', statuses: ['PENDING', 'STARTING', 'RUNNING', 'RECOVERING', 'CANCELLING'] },
  { id: 'succeeded', label: 'Succeeded', statuses: ['SUCCEEDED'] },
  { id: 'failed', label: 'Failed', statuses: ['FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'] },
  { id: 'cancelled', label: 'Cancelled', statuses: ['CANCELLED'] },
] as const;
type GroupId = (typeof GROUPS)[number]['id'];

const PAGE_SIZE = 50;

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

function describeCancel(r: { cancelled: number[]; cancelling: number[]; alreadyTerminal: { id: number }[]; notFound: number[] }): string {
  const parts: string[] = [];
  const n = r.cancelled.length + r.cancelling.length;
  if (n) parts.push(`Cancelling ${n} job${n === 1 ? '' : 's'}`);
  if (r.alreadyTerminal.length) parts.push(`${r.alreadyTerminal.length} had already finished`);
  if (r.notFound.length) parts.push(`${r.notFound.length} no longer exist`);
  return parts.join('; ') || 'Nothing to cancel';
}

export function JobsPage() {
  const [group, setGroup] = useState<GroupId>('all');
  const [search, setSearch] = useState('');
  const q = useDebounced(search.trim(), 250);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [notice, setNotice] = useState<{ tone: 'info' | 'error'; text: string } | null>(null);
  const now = useNow(5000);

  const statuses = GROUPS.find((g) => g.id === group)!.statuses;
  const filter: ListFilter = useMemo(() => ({ status: [...statuses], q, cursor: cursors[cursors.length - 1], limit: PAGE_SIZE }), [statuses, q, cursors]);
  const list = useJobList(filter);
  const jobs = list.data?.jobs ?? [];

  // New filters → back to the first page, selection cleared.
  const filterKey = `${group}|${q}`;
  const lastFilterKey = useRef(filterKey);
  useEffect(() => {
    if (lastFilterKey.current === filterKey) return;
    lastFilterKey.current = filterKey;
    setCursors([null]);
    setSelected(new Set());
  }, [filterKey]);

  const cancel = useCancelJob();
  const cancelMany = useCancelJobs();
  const del = useDeleteJob();

  const pageIds = jobs.map((j) => j.id);
  const selectedOnPage = pageIds.filter((id) => selected.has(id));
  const allSelected = pageIds.length > 0 && selectedOnPage.length === pageIds.length;
  const headerBox = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (headerBox.current) headerBox.current.indeterminate = selectedOnPage.length > 0 && !allSelected;
  }, [selectedOnPage.length, allSelected]);

  const toggle = (id: number) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });

  const isFiltered = group !== 'all' || q !== '';
  const firstPage = cursors.length === 1;
  const showEmpty = list.isSuccess && jobs.length === 0 && !isFiltered && firstPage;
  const selectedCancellable = jobs.filter((j) => selected.has(j.id) && canCancel(j.status)).length;

  const onCancel = (j: JobSummary) =>
    cancel.mutate(j.id, {
      onSuccess: (r) => setNotice({ tone: 'info', text: `Job ${j.id}: ${describeCancel(r)}` }),
      onError: (e) => setNotice({ tone: 'error', text: `Could not cancel job ${j.id}: ${e.message}` }),
    });
  const onDelete = (j: JobSummary) => {
    del.mutate(j.id, {
      onSuccess: () => setNotice({ tone: 'info', text: `Deleted job ${j.id}` }),
      onError: (e) => setNotice({ tone: 'error', text: `Could not delete job ${j.id}: ${e.message}` }),
    });
  };
  const onBulkCancel = () => {
    const ids = [...selected];
    cancelMany.mutate(ids, {
      onSuccess: (r) => {
        setNotice({ tone: 'info', text: describeCancel(r) });
        setSelected(new Set());
      },
      onError: (e) => setNotice({ tone: 'error', text: `Could not cancel: ${e.message}` }),
    });
  };

  return (
    <>
      <div className="page-head">
        <h1>Jobs</h1>
        <span className="grow" />
        <Link href="/jobs/new" className="btn btn-primary">
          New job
        </Link>
      </div>

      {showEmpty ? (
        <EmptyState />
      ) : (
        <>
          <div className="toolbar">
            <div className="chips" role="group" aria-label="Filter by status">
              {GROUPS.map((g) => (
                <button key={g.id} type="button" className="chip" aria-pressed={group === g.id} onClick={() => setGroup(g.id)}>
                  {g.label}
                </button>
              ))}
            </div>
            <label className="search">
              <span className="visually-hidden">Search jobs by name or ID</span>
              <input className="input" type="search" placeholder="Search name or ID…" value={search} onChange={(e) => setSearch(e.target.value)} style={{ width: '100%' }} />
            </label>
          </div>

          <div role="status" aria-live="polite">
            {notice && (
              <div className={`alert alert-${notice.tone === 'error' ? 'error' : 'info'}`}>
                {notice.text}{' '}
                <button type="button" className="btn btn-ghost btn-sm" onClick={() => setNotice(null)}>
                  Dismiss
                </button>
              </div>
            )}
          </div>

          {selected.size > 0 && (
            <div className="bulkbar" role="region" aria-label="Selection">
              <strong>{selected.size} selected</strong>
              <button type="button" className="btn btn-danger btn-sm" disabled={selectedCancellable === 0 || cancelMany.isPending} onClick={onBulkCancel}>
                Cancel selected{selectedCancellable ? ` (${selectedCancellable})` : ''}
              </button>
              <button type="button" className="btn btn-ghost btn-sm" onClick={() => setSelected(new Set())}>
                Clear selection
              </button>
            </div>
          )}

          {list.isError && <div className="alert alert-error">Could not load jobs: {list.error.message}</div>}

          <div className="card">
            <div className="table-wrap">
              <table className="table jobs-table" aria-busy={list.isFetching} data-testid="jobs-table">
                <caption className="visually-hidden">Jobs, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col" className="col-check">
                      <input
                        ref={headerBox}
                        type="checkbox"
                        aria-label="Select all jobs on this page"
                        checked={allSelected}
                        onChange={() =>
                          setSelected((s) => {
                            const n = new Set(s);
                            if (allSelected) pageIds.forEach((id) => n.delete(id));
                            else pageIds.forEach((id) => n.add(id));
                            return n;
                          })
                        }
                      />
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
                  {list.isPending && (
                    <tr>
                      <td colSpan={9} className="muted">
                        Loading jobs…
                      </td>
                    </tr>
                  )}
                  {list.isSuccess && jobs.length === 0 && (
                    <tr>
                      <td colSpan={9} className="muted">
                        {isFiltered ? 'No jobs match these filters.' : 'No more jobs.'}
                      </td>
                    </tr>
                  )}
                  {jobs.map((j) => (
                    <tr key={j.id} aria-selected={selected.has(j.id)} data-job-id={j.id}>
                      <td className="col-check">
                        <input type="checkbox" aria-label={`Select job ${j.id}`} checked={selected.has(j.id)} onChange={() => toggle(j.id)} />
                      </td>
                      <td className="col-id">
                        <Link href={`/jobs/${j.id}`}>{j.id}</Link>
                      </td>
                      <td className="col-name">
                        <Link href={`/jobs/${j.id}`}>{j.name}</Link>
                        {j.statusReason && j.status !== 'SUCCEEDED' && (
                          <span className="reason" title={j.statusReason}>
                            {j.statusReason}
                          </span>
                        )}
                      </td>
                      <td className="hide-sm">
                        <span className="progress" title={`${j.tasksSucceeded} of ${j.taskCount} tasks succeeded`}>
                          <span className="progress-bar" aria-hidden="true">
                            <span style={{ width: `${j.taskCount ? (100 * j.tasksSucceeded) / j.taskCount : 0}%` }} />
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
                      <td className="col-num hide-sm" title={j.recoveryCount ? `${j.restartCount} restarts after errors, ${j.recoveryCount} recoveries` : undefined}>
                        {j.restartCount}
                        {j.recoveryCount ? <span className="faint"> +{j.recoveryCount}</span> : null}
                      </td>
                      <td className="col-actions">
                        <span className="row-actions">
                          {canCancel(j.status) && (
                            <ConfirmButton className="btn btn-sm btn-danger" ariaLabel={`Cancel job ${j.id}`} confirmLabel="Confirm cancel" onConfirm={() => onCancel(j)} disabled={cancel.isPending && cancel.variables === j.id}>
                              Cancel
                            </ConfirmButton>
                          )}
                          {canDelete(j.status) && (
                            <ConfirmButton className="btn btn-sm btn-danger" ariaLabel={`Delete job ${j.id}`} confirmLabel="Confirm delete" onConfirm={() => onDelete(j)} disabled={del.isPending && del.variables === j.id}>
                              Delete
                            </ConfirmButton>
                          )}
                        </span>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <nav className="pager" aria-label="Pages">
              <button type="button" className="btn btn-sm" disabled={firstPage} onClick={() => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c))}>
                ← Newer
              </button>
              <span className="muted" style={{ fontSize: 12.5 }}>
                Page {cursors.length}
                {list.isFetching ? ' · updating…' : ''}
              </span>
              <button type="button" className="btn btn-sm" disabled={!list.data?.nextCursor} onClick={() => list.data?.nextCursor && setCursors((c) => [...c, list.data!.nextCursor])}>
                Older →
              </button>
            </nav>
          </div>
        </>
      )}
    </>
  );
}
