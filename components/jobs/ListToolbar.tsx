'use client';
/**
 * The jobs list's toolbar: the status chips (each with its count, GET /api/jobs/counts), the
 * order, the name/ID search — each kept in the page URL by useListUrl.
 */
import type { KeyboardEvent, RefObject } from 'react';
import type { JobCounts } from '@/lib/api/types';
import { groupCount, LIST_SORT_OPTIONS, STATUS_GROUPS, type SortId } from '@/lib/ui/list-url';
import type { useListUrl } from './useListUrl';

/** Escape in the search box hands the keys back to the list (keeping the search: a search field would clear it). */
function leaveSearch(e: KeyboardEvent<HTMLInputElement>) {
  if (e.key !== 'Escape') return;
  e.preventDefault();
  e.currentTarget.blur();
}

export function ListToolbar({ url, counts, searchBox }: { url: ReturnType<typeof useListUrl>; counts: JobCounts | undefined; searchBox: RefObject<HTMLInputElement | null> }) {
  const { group, sort } = url.state;
  return (
    <div className="toolbar">
      <div className="chips" role="group" aria-label="Filter by status">
        {STATUS_GROUPS.map((g) => {
          const n = counts ? groupCount(g.id, counts) : null;
          return (
            // The name stays the label ("Failed"); the count is its description ("3 jobs").
            <button key={g.id} type="button" className="chip" aria-pressed={group === g.id} onClick={() => url.setGroup(g.id)} data-testid={`chip-${g.id}`} aria-label={g.label} aria-describedby={n === null ? undefined : `chip-count-${g.id}`}>
              {g.label}
              {n !== null && (
                <span className="chip-count" id={`chip-count-${g.id}`} data-testid={`chip-count-${g.id}`}>
                  <span aria-hidden="true">{n}</span>
                  <span className="visually-hidden">{`${n} job${n === 1 ? '' : 's'}`}</span>
                </span>
              )}
            </button>
          );
        })}
      </div>
      <label className="sort">
        <span className="visually-hidden">Order</span>
        <select className="input" value={sort} onChange={(e) => url.setSort(e.target.value as SortId)} data-testid="list-sort">
          {LIST_SORT_OPTIONS.map((o) => (
            <option key={o.id} value={o.id}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
      <label className="search">
        <span className="visually-hidden">Search jobs by name or ID</span>
        <input ref={searchBox} className="input" type="search" placeholder="Search name or ID…  ( / )" value={url.typed} onChange={(e) => url.setTyped(e.target.value)} onKeyDown={leaveSearch} style={{ width: '100%' }} />
      </label>
    </div>
  );
}
