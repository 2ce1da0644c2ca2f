'use client';
/**
 * The jobs list: status filter chips with their counts, name/ID search (`#4` finds job 4), an
 * order (newest first, oldest first, by name), one queue's jobs (`?queue=gpu`, from the queues page), keyset pagination through the API cursor — all in
 * the page URL (lib/ui/list-url.ts), so a view can be shared and survives a reload — live updates from the list stream (via the query cache), a menu per row
 * (open, re-run, cancel, delete) and actions on a selection. Keys: `/` search, `j` / `k` move,
 * `Enter` open, `x` select, `?` the list of them. Shows how to launch a first job when there is
 * none.
 */
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useCancelGroup } from '@/lib/ui/flow-hooks';
import { useJobCounts, useJobList, useNow } from '@/lib/ui/hooks';
import type { ListFilter } from '@/lib/ui/list-cache';
import { groupStatuses } from '@/lib/ui/list-url';
import type { Shortcut } from '@/lib/ui/shortcuts';
import { jobPermissions, may, mayChangeAny } from '@/lib/ui/permissions';
import { useViewer } from '@/lib/ui/team-hooks';
import { ShortcutsHelp } from '../ShortcutsHelp';
import { useShortcuts } from '../useShortcuts';
import { EmptyState } from './EmptyState';
import { JobsTable, type TableNote } from './JobsTable';
import { ListToolbar } from './ListToolbar';
import { LogSearch } from './LogSearch';
import { SelectionBar } from './SelectionBar';
import { useJobActions } from './useJobActions';
import { useListUrl } from './useListUrl';

const PAGE_SIZE = 50;

/** The list's keys: move the row cursor, open it, select it, search. */
function useListKeys(ids: number[], active: number | null, setActive: (id: number | null) => void, toggle: (id: number) => void, search: () => void): Shortcut[] {
  const router = useRouter();
  const move = (d: 1 | -1) => {
    if (!ids.length) return;
    const at = active === null ? -1 : ids.indexOf(active);
    setActive(ids[at < 0 ? 0 : Math.max(0, Math.min(ids.length - 1, at + d))]);
  };
  return [
    { key: '/', description: 'Search jobs', run: search },
    { key: 'j', description: 'Next job', run: () => move(1) },
    { key: 'k', description: 'Previous job', run: () => move(-1) },
    { key: 'Enter', description: 'Open the job', run: () => active !== null && router.push(`/jobs/${active}`) },
    { key: 'x', description: 'Select the job (for the selection actions)', run: () => active !== null && toggle(active) },
  ];
}

export function JobsPage() {
  const url = useListUrl();
  const { group, q, queue, sort, cursors } = url.state;
  // Whose jobs: a member sees its own unless it asks for everyone's (docs/design.md §15).
  const viewer = useViewer();
  const mine = url.state.owner === 'me' || (url.state.owner === '' && viewer?.role === 'member');
  const owner = mine ? viewer?.name : undefined;
  // Every status: a group (array, sweep) is one row; a status filter lists the jobs themselves.
  const filter: ListFilter = useMemo(() => ({ status: groupStatuses(group), q, queue, owner, sort, cursor: cursors.at(-1) ?? null, limit: PAGE_SIZE, fold: group === 'all' }), [group, q, queue, owner, sort, cursors]);
  const list = useJobList(filter);
  const counts = useJobCounts(q, queue);
  const jobs = useMemo(() => list.data?.jobs ?? [], [list.data]);
  const groups = useMemo(() => new Map((list.data?.groups ?? []).map((g) => [g.id, g])), [list.data]);
  const cancelGroup = useCancelGroup();
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const [active, setActive] = useState<number | null>(null);
  const now = useNow(5000);
  const searchBox = useRef<HTMLInputElement>(null);
  const clear = useCallback(() => setSelected(new Set()), []);
  const acts = useJobActions(selected, jobs, clear);

  // New filters → selection cleared, row cursor back to the top.
  const filterKey = `${group}|${q}|${queue}|${owner ?? ''}|${sort}`;
  const lastKey = useRef(filterKey);
  useEffect(() => {
    if (lastKey.current === filterKey) return;
    lastKey.current = filterKey;
    setSelected(new Set());
    setActive(null);
  }, [filterKey]);

  // What can be selected: the jobs on the page the viewer may change (a member its own).
  const selectable = useMemo(() => jobs.filter((j) => mayChangeAny(jobPermissions(viewer, j.owner))).map((j) => j.id), [jobs, viewer]);
  const toggle = useCallback((id: number) => setSelected((s) => (s.has(id) ? new Set([...s].filter((x) => x !== id)) : new Set([...s, id]))), []);
  const ids = jobs.map((j) => j.id);
  const toggleAll = () => setSelected((s) => (selectable.every((id) => s.has(id)) ? new Set([...s].filter((id) => !selectable.includes(id))) : new Set([...s, ...selectable])));
  const keys = useListKeys(ids, active, setActive, (id) => selectable.includes(id) && toggle(id), () => searchBox.current?.focus());
  const { helpOpen, setHelpOpen } = useShortcuts(keys);

  const isFiltered = group !== 'all' || q !== '' || queue !== '' || mine;
  const firstPage = cursors.length === 0;
  const note: TableNote = list.isPending ? 'loading' : list.isSuccess && jobs.length === 0 ? (isFiltered ? 'no-match' : 'no-more') : null;
  // "No jobs yet" only when the server has none: a member with no jobs of its own on a busy
  // server keeps the toggle to everyone's (the counts are not narrowed by owner).
  const onlyOwnerFilter = mine && group === 'all' && q === '' && queue === '';
  const showEmpty = list.isSuccess && jobs.length === 0 && firstPage && (!isFiltered || (onlyOwnerFilter && counts.data?.total === 0));

  return (
    <>
      <div className="page-head">
        <h1>Jobs</h1>
        <span className="grow" />
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => setHelpOpen(true)} title="Keyboard shortcuts (?)">
          Shortcuts <kbd>?</kbd>
        </button>
        {may(viewer, 'POST /api/jobs') && (
          <Link prefetch={false} href="/jobs/new" className="btn btn-primary">
            New job
          </Link>
        )}
      </div>
      <ShortcutsHelp open={helpOpen} onClose={() => setHelpOpen(false)} shortcuts={keys} />

      {showEmpty ? (
        <EmptyState maySubmit={may(viewer, 'POST /api/jobs')} />
      ) : (
        <>
          <ListToolbar url={url} counts={counts.data} searchBox={searchBox} />
          {viewer?.role === 'member' && (
            <p className="queue-filter" data-testid="owner-filter">
              {mine ? 'Your jobs' : 'Everyone\u2019s jobs'}{' '}
              <button type="button" className="btn btn-ghost btn-sm" onClick={() => url.setOwner(mine ? 'all' : 'me')} data-testid="owner-toggle">
                {mine ? 'Show everyone\u2019s' : 'Show only mine'}
              </button>
            </p>
          )}
          <LogSearch filter={filter} />
          {queue && (
            <p className="queue-filter" data-testid="queue-filter">
              Jobs of queue <strong>{queue}</strong>{' '}
              <button type="button" className="btn btn-ghost btn-sm" onClick={() => url.setQueue('')}>
                All queues
              </button>
            </p>
          )}

          <div role="status" aria-live="polite" data-testid="list-notice">
            {acts.notice && (
              <div className={`alert alert-${acts.notice.tone === 'error' ? 'error' : 'info'}`}>
                {acts.notice.text}{' '}
                <button type="button" className="btn btn-ghost btn-sm" onClick={() => acts.setNotice(null)}>
                  Dismiss
                </button>
              </div>
            )}
          </div>

          {selected.size > 0 && <SelectionBar selected={selected} onPage={jobs} busy={acts.busy} onCancel={acts.bulk.cancel} onRerun={acts.bulk.rerun} onDelete={acts.bulk.remove} onClear={clear} />}
          {list.isError && <div className="alert alert-error">Could not load jobs: {list.error.message}</div>}

          <div className="card">
            <JobsTable jobs={jobs} groups={groups} onCancelGroup={cancelGroup} selectable={selectable} viewer={viewer} selected={selected} active={active} note={note} fetching={list.isFetching} onToggle={toggle} onToggleAll={toggleAll} actions={acts.row} busy={acts.busy} now={now} />
            <nav className="pager" aria-label="Pages">
              <button type="button" className="btn btn-sm" disabled={firstPage} onClick={url.newer}>
                {sort === 'newest' ? '← Newer' : '← Previous'}
              </button>
              <span className="muted" style={{ fontSize: 12.5 }} data-testid="page-number">
                Page {cursors.length + 1}
                {list.isFetching ? ' · updating…' : ''}
              </span>
              <button type="button" className="btn btn-sm" disabled={!list.data?.nextCursor} onClick={() => list.data?.nextCursor && url.older(list.data.nextCursor)}>
                {sort === 'newest' ? 'Older →' : 'Next →'}
              </button>
            </nav>
          </div>
        </>
      )}
    </>
  );
}
