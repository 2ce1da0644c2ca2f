'use client';
/**
 * The log viewer: every attempt of every task in stream order with the story banners between
 * them, virtualised (@tanstack/react-virtual, fixed row heights) so 100,000+ lines stay smooth.
 * Follow mode sticks to the bottom while lines arrive, pauses when the user scrolls up, and
 * resumes with "Jump to latest" (or by scrolling back to the bottom); once the stream ended it
 * says so instead. Search within the log (Enter: next match, Shift+Enter: previous), download
 * of the raw file of the attempt in view.
 *
 * Line numbers run across the whole view (every attempt of every task, in stream order), so a
 * number names one line of what is on screen; hovering one tells its task, attempt and line in
 * that attempt's raw file. Banners wrap (measured rows); log lines keep a fixed height.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { ansiToPlain } from '@/lib/ui/ansi';
import { downloadUrl } from '@/lib/ui/api';
import type { ConnectionState } from '@/lib/ui/connection';
import type { LogBuffer, LogRow } from '@/lib/ui/log-buffer';
import { LogText } from './LogLine';
import type { AttemptRef } from './Pipeline';

/** Row heights (px); must match the CSS line-height (20px) and a one-line banner (wrapped banners are measured). */
const LINE_H = 20;
const BANNER_H = 32;

/** A request from the page to show an attempt (seq makes repeated clicks count). */
export interface JumpRequest extends AttemptRef {
  seq: number;
}

function rowAttempt(rows: LogRow[], from: number, dir: 1 | -1): AttemptRef | null {
  for (let i = from; i >= 0 && i < rows.length; i += dir) {
    const r = rows[i];
    if (r.task !== null && r.attempt !== null) return { task: r.task, attempt: r.attempt };
  }
  return null;
}

/**
 * One drawn row; memoised so scrolling re-renders only rows that enter the window. Banners
 * wrap: their height is measured (`measure`, keyed by `data-index`).
 */
const Row = memo(function Row({
  row,
  text,
  index,
  start,
  size,
  current,
  query,
  measure,
}: {
  row: LogRow;
  text: string;
  index: number;
  start: number;
  size: number;
  current: boolean;
  query: string | null;
  measure: (el: Element | null) => void;
}) {
  if (row.kind === 'banner') {
    return (
      <div ref={measure} data-index={index} className={`log-banner tone-${row.tone}${current ? ' current-match' : ''}`} style={{ transform: `translateY(${start}px)`, minHeight: BANNER_H }} data-testid="log-banner" data-key={row.key}>
        <span>{text}</span>
      </div>
    );
  }
  return (
    <div className={`log-row${current ? ' current-match' : ''}`} style={{ transform: `translateY(${start}px)`, height: size }} data-testid="log-line">
      <span className="log-ln" aria-hidden="true" title={`task ${row.task} · attempt ${row.attempt} · line ${row.n} of its raw log`}>
        {row.seq}
      </span>
      <span className="log-text">
        <LogText text={text} query={query} />
      </span>
    </div>
  );
});

export const LogViewer = memo(function LogViewer({
  jobId,
  buffer,
  version,
  streamState,
  ended,
  jobTerminal,
  jump,
  onViewing,
  describe,
}: {
  jobId: number;
  buffer: LogBuffer;
  version: number;
  streamState: ConnectionState | 'idle';
  ended: boolean;
  jobTerminal: boolean;
  jump: JumpRequest | null;
  onViewing: (r: AttemptRef | null) => void;
  describe: (r: AttemptRef) => string;
}) {
  const rows = buffer.rows;
  const count = rows.length;
  const scroller = useRef<HTMLDivElement>(null);
  const [following, setFollowing] = useState(true);
  const followRef = useRef(true);
  const lastTop = useRef(0);

  const setFollow = useCallback((v: boolean) => {
    followRef.current = v;
    setFollowing(v);
  }, []);

  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scroller.current,
    estimateSize: (i) => (buffer.rows[i]?.kind === 'banner' ? BANNER_H : LINE_H),
    overscan: 12,
  });

  // Rows dropped from the front (browser cap) shift every index: re-measure.
  const dropped = buffer.dropped;
  useEffect(() => {
    virtualizer.measure();
  }, [dropped, virtualizer]);

  // Follow: after new rows render (or a wrapped banner was measured), stick to the bottom.
  const totalSize = virtualizer.getTotalSize();
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || !followRef.current) return;
    el.scrollTop = el.scrollHeight;
    lastTop.current = el.scrollTop;
  }, [version, count, following, totalSize]);

  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    const top = el.scrollTop;
    const atBottom = el.scrollHeight - top - el.clientHeight < LINE_H;
    if (followRef.current && top < lastTop.current - 1 && !atBottom) setFollow(false);
    else if (!followRef.current && atBottom && top > lastTop.current) setFollow(true);
    lastTop.current = top;
  }, [setFollow]);

  const jumpToLatest = useCallback(() => {
    setFollow(true);
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [setFollow]);

  // Page asked to show an attempt: put its first row at the top, pause follow.
  useEffect(() => {
    if (!jump) return;
    const i = buffer.firstRowOf(jump.task, jump.attempt);
    if (i < 0) return;
    setFollow(false);
    virtualizer.scrollToIndex(i, { align: 'start' });
  }, [jump?.seq]);

  // ── search ──
  const [query, setQuery] = useState('');
  const [q, setQ] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setQ(query), 200);
    return () => clearTimeout(t);
  }, [query]);
  // Recount matches as lines arrive, at most twice a second.
  const [searchTick, setSearchTick] = useState(0);
  useEffect(() => {
    if (!q) return;
    const t = setTimeout(() => setSearchTick(version), 500);
    return () => clearTimeout(t);
  }, [version, q]);
  const matches = useMemo(() => buffer.search(q, ansiToPlain), [buffer, q, searchTick]);
  const [mi, setMi] = useState(-1);
  const showMatch = useCallback(
    (i: number) => {
      setMi(i);
      setFollow(false);
      virtualizer.scrollToIndex(matches[i], { align: 'center' });
    },
    [matches, setFollow, virtualizer],
  );
  // Enter pressed before the typing debounce ran: search now, then jump (below).
  const pendingJump = useRef<0 | 1 | -1>(0);
  useEffect(() => {
    const dir = pendingJump.current;
    pendingJump.current = 0;
    if (dir && matches.length) showMatch(dir === 1 ? 0 : matches.length - 1);
    else setMi(-1);
    // Only a new query resets the position (new lines re-count matches, keeping it).
  }, [q]);
  /** Next (1) or previous (-1) match; from no position, the first or the last. */
  const goMatch = useCallback(
    (dir: 1 | -1) => {
      if (query !== q) {
        pendingJump.current = dir;
        setQ(query);
        return;
      }
      if (!matches.length) return;
      showMatch(mi < 0 ? (dir === 1 ? 0 : matches.length - 1) : (mi + dir + matches.length) % matches.length);
    },
    [query, q, matches, mi, showMatch],
  );
  const currentMatchRow = mi >= 0 ? matches[mi] : -1;

  // ── which attempt is in view ──
  const items = virtualizer.getVirtualItems();
  const viewing: AttemptRef | null = useMemo(() => {
    if (!count) return null;
    if (following) return rowAttempt(rows, count - 1, -1);
    const first = items.find((it) => {
      const el = scroller.current;
      return !el || it.end > el.scrollTop + 1;
    });
    return first ? (rowAttempt(rows, first.index, 1) ?? rowAttempt(rows, first.index, -1)) : null;
  }, [items[0]?.index, items.length, following, count, version]);
  const viewingKey = viewing ? `${viewing.task}:${viewing.attempt}` : '';
  useEffect(() => {
    onViewing(viewing);
  }, [viewingKey]);

  const lineCount = buffer.lineCount;

  let status: string;
  if (ended) status = 'Stream ended';
  else if (streamState === 'live') status = 'Live';
  else if (streamState === 'reconnecting') status = 'Reconnecting — will resume where it left off';
  else if (streamState === 'failed') status = 'Disconnected';
  else status = 'Connecting…';

  return (
    <section className="card logs" aria-labelledby="logs-title" data-testid="log-viewer" data-following={following} data-rows={count}>
      <div className="logs-bar">
        <h2 id="logs-title">Logs</h2>
        <span className="logs-scope" data-testid="log-scope">
          {viewing ? `${following && !ended ? 'Following ' : ''}${describe(viewing)}` : ''}
        </span>
        <span className="grow" />
        <form
          className="logs-search"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            goMatch(1);
          }}
        >
          <label>
            <span className="visually-hidden">Search the log</span>
            <input
              className="input"
              type="search"
              placeholder="Search log…"
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter') {
                  e.preventDefault();
                  goMatch(e.shiftKey ? -1 : 1);
                }
              }}
              aria-describedby="log-search-help"
              data-testid="log-search"
            />
          </label>
          <span id="log-search-help" className="visually-hidden">
            Enter: next match. Shift+Enter: previous match.
          </span>
          <span className="match-count" aria-live="polite" data-testid="match-count" title={q && matches.length && mi < 0 ? 'Press Enter to go to the first match' : undefined}>
            {q ? (matches.length ? (mi >= 0 ? `${mi + 1}/${matches.length}` : `${matches.length.toLocaleString('en-US')} found`) : 'no match') : ''}
          </span>
          <button type="button" className="btn btn-sm btn-icon" aria-label="Previous match" title="Previous match (Shift+Enter)" disabled={!matches.length} onClick={() => goMatch(-1)}>
            ↑
          </button>
          <button type="submit" className="btn btn-sm btn-icon" aria-label="Next match" title="Next match (Enter)" disabled={!matches.length}>
            ↓
          </button>
        </form>
        {ended ? (
          <span className="follow-state" data-state="ended" data-testid="follow" title="The job finished: every line has arrived, nothing more to follow">
            Ended
          </span>
        ) : (
          <button
            type="button"
            className="btn btn-sm follow-btn"
            aria-pressed={following}
            data-testid="follow"
            data-state={following ? 'following' : 'paused'}
            onClick={() => (following ? setFollow(false) : jumpToLatest())}
            title={following ? 'Following new lines as they arrive (click to pause)' : 'Follow new lines as they arrive'}
          >
            {following ? 'Following' : 'Follow'}
          </button>
        )}
        {viewing ? (
          <a className="btn btn-sm" href={downloadUrl(jobId, viewing.task, viewing.attempt)} download data-testid="log-download" title={`Raw log file of ${describe(viewing)}`}>
            Download raw
          </a>
        ) : (
          <button type="button" className="btn btn-sm" disabled>
            Download raw
          </button>
        )}
      </div>
      <div className="logs-wrap">
        <div ref={scroller} className="log-scroller" onScroll={onScroll} tabIndex={0} role="log" aria-live="off" aria-label="Job log" data-testid="log-scroller">
          {count === 0 ? (
            <div className="log-empty">{jobTerminal && ended ? 'This job printed nothing.' : 'Waiting for output…'}</div>
          ) : (
            <div className="log-inner" style={{ height: virtualizer.getTotalSize() }}>
              {items.map((it) => {
                const r = rows[it.index];
                return r ? <Row key={it.key} row={r} text={r.text} index={it.index} start={it.start} size={it.size} current={it.index === currentMatchRow} query={q || null} measure={virtualizer.measureElement} /> : null;
              })}
            </div>
          )}
        </div>
        {!following && count > 0 && (
          <button type="button" className="btn btn-primary btn-sm jump" onClick={jumpToLatest} data-testid="jump-latest">
            {ended ? 'Jump to end ↓' : 'Jump to latest ↓'}
          </button>
        )}
      </div>
      <div className="logs-foot">
        <span data-testid="stream-status" data-state={ended ? 'ended' : streamState}>
          {status}
        </span>
        <span>{lineCount.toLocaleString('en-US')} lines</span>
        {buffer.dropped > 0 && <span>{buffer.dropped.toLocaleString('en-US')} earlier rows not kept</span>}
      </div>
    </section>
  );
});
