'use client';
/**
 * The jobs list's state (lib/ui/list-url.ts) read from and written to the page URL with the
 * History API, which Next.js keeps in step with useSearchParams — no server round trip. A
 * filter or a page is a new history entry (Back undoes it); typing in the search replaces the
 * entry (debounced), so Back does not replay every keystroke.
 */
import { useSearchParams } from 'next/navigation';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { listUrlQuery, parseListUrl, type ListUrlState } from '@/lib/ui/list-url';

/** How long typing may pause before the search applies (ms). */
const SEARCH_DEBOUNCE_MS = 250;

export function useListUrl() {
  const params = useSearchParams();
  const state = useMemo(() => parseListUrl(params?.toString() ?? ''), [params]);
  const go = useCallback((next: ListUrlState, mode: 'push' | 'replace') => {
    const url = `${window.location.pathname}${listUrlQuery(next)}`;
    if (mode === 'push') window.history.pushState(null, '', url);
    else window.history.replaceState(null, '', url);
  }, []);

  // The search box: what is typed now; applied to the URL after a pause.
  const [typed, setTyped] = useState(state.q);
  // Back/Forward (or a link) changed the search: show it, unless it is what is being typed.
  useEffect(() => setTyped((t) => (t.trim() === state.q ? t : state.q)), [state.q]);
  useEffect(() => {
    const q = typed.trim();
    if (q === state.q) return;
    const t = setTimeout(() => go({ ...state, q, cursors: [] }, 'replace'), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [typed, state, go]);

  return {
    state,
    typed,
    setTyped,
    setGroup: (group: ListUrlState['group']) => go({ ...state, group, cursors: [] }, 'push'),
    setSort: (sort: ListUrlState['sort']) => go({ ...state, sort, cursors: [] }, 'push'),
    setQueue: (queue: string) => go({ ...state, queue, cursors: [] }, 'push'),
    setOwner: (owner: ListUrlState['owner']) => go({ ...state, owner, cursors: [] }, 'push'),
    older: (cursor: string) => go({ ...state, cursors: [...state.cursors, cursor] }, 'push'),
    newer: () => go({ ...state, cursors: state.cursors.slice(0, -1) }, 'push'),
  };
}
