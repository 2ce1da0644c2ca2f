'use client';
/**
 * Search within the log: typing is debounced (200 ms); matches are recounted as lines arrive (at
 * most twice a second); Enter / Shift+Enter go to the next / previous match — also right after
 * typing, before the debounce ran. Matches are buffer rows within the scope the viewer shows
 * (one attempt when narrowed); going to one in a folded section unfolds it (`show`).
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ansiToPlain } from '@/lib/ui/ansi';
import type { LogBuffer } from '@/lib/ui/log-buffer';
import type { AttemptKey } from '@/lib/ui/log-view';

export function useLogSearch(buffer: LogBuffer, version: number, only: AttemptKey | null, show: (row: number) => void) {
  const [query, setQuery] = useState('');
  const [q, setQ] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setQ(query), 200);
    return () => clearTimeout(t);
  }, [query]);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!q) return;
    const t = setTimeout(() => setTick(version), 500);
    return () => clearTimeout(t);
  }, [version, q]);
  const onlyKey = only ? `${only.task}:${only.attempt}` : '';
  const matches = useMemo(() => {
    const all = buffer.search(q, ansiToPlain);
    if (!only) return all;
    return all.filter((i) => buffer.rows[i].task === only.task && buffer.rows[i].attempt === only.attempt);
    // `tick` and the scope key recount; `only` is read through its key.
  }, [buffer, q, tick, onlyKey]);
  const [mi, setMi] = useState(-1);
  const goTo = useCallback(
    (i: number) => {
      setMi(i);
      show(matches[i]);
    },
    [matches, show],
  );
  // Enter pressed before the debounce ran: search now, then go (below).
  const pending = useRef<0 | 1 | -1>(0);
  useEffect(() => {
    const dir = pending.current;
    pending.current = 0;
    if (dir && matches.length) goTo(dir === 1 ? 0 : matches.length - 1);
    else setMi(-1);
    // Only a new query resets the position (new lines recount matches, keeping it).
  }, [q, onlyKey]);
  /** Next (1) or previous (-1) match; from no position, the first or the last. */
  const go = useCallback(
    (dir: 1 | -1) => {
      if (query !== q) {
        pending.current = dir;
        setQ(query);
        return;
      }
      if (!matches.length) return;
      goTo(mi < 0 ? (dir === 1 ? 0 : matches.length - 1) : (mi + dir + matches.length) % matches.length);
    },
    [query, q, matches, mi, goTo],
  );
  return { query, setQuery, q, matches, index: mi, currentRow: mi >= 0 ? (matches[mi] ?? -1) : -1, go };
}
