'use client';
/**
 * The log viewer: every attempt of every task in stream order with the story banners between
 * them, as foldable sections (a task, an attempt: lib/ui/log-view.ts), or narrowed to the one
 * attempt picked in the pipeline. Virtualised (components/job/LogRows.tsx), so 100,000+ lines
 * stay smooth. Follow mode sticks to the bottom while lines arrive, pauses when the user scrolls
 * up, and resumes with "Jump to end" (shown only when there is more below) or by scrolling back
 * down; once the stream ended it says so instead. Search within the log, a wrap toggle, and the
 * raw downloads (the attempt in view, the whole job), and line times (when each line was written,
 * from the log's time index) on a toggle. Keys: `f` follow, `g` / `G` top / end, `/` search,
 * `t` times. A job
 * with a multi-node task gets a rank selector: every rank's lines interleaved, each prefixed with
 * its rank, or one rank's (and that rank's raw download).
 *
 * Line numbers run across the whole view (every attempt of every task, in stream order), so a
 * number names one line of what is on screen; narrowed to one attempt, they are that attempt's
 * own (as in its raw file). Hovering one tells its task, attempt and line in the raw file.
 */
import { useVirtualizer, type Virtualizer } from '@tanstack/react-virtual';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type Dispatch, type RefObject, type SetStateAction } from 'react';
import type { ConnectionState } from '@/lib/ui/connection';
import type { LogBuffer } from '@/lib/ui/log-buffer';
import type { PreviewInfo } from '@/lib/ui/use-job-log';
import { attemptNear, foldsHiding, LogView, sectionKey, type AttemptKey, type SectionHeader } from '@/lib/ui/log-view';
import { ShortcutsHelp } from '../ShortcutsHelp';
import { useShortcuts } from '../useShortcuts';
import { BANNER_H, LINE_H, LogRows, type SectionInfo } from './LogRows';
import { LogToolbar } from './LogToolbar';
import { useLogFollow } from './useLogFollow';
import { useLogSearch } from './useLogSearch';

/** A screen narrow enough for lines to wrap by default (the phone layout's breakpoint, app/styles/responsive.css). */
const NARROW = '(max-width: 640px)';

/** What the footer says about the stream. */
function streamText(ended: boolean, state: ConnectionState | 'idle', restarting: boolean): string {
  if (ended) return 'Stream ended';
  if (state === 'live') return 'Live';
  if (state === 'reconnecting') return restarting ? 'Server restarting — reconnecting…' : 'Reconnecting — will resume where it left off';
  if (state === 'failed') return 'Disconnected';
  return 'Connecting…';
}

/** The drawn items for the buffer's rows and the view's shape (rebuilt only when that changes; a new view for another buffer). */
function useLogItems(buffer: LogBuffer, version: number, taskSections: boolean, folded: ReadonlySet<string>, only: AttemptKey | null, rank: number | null) {
  const view = useMemo(() => new LogView(), [buffer]);
  const onlyKey = only ? sectionKey(only.task, only.attempt) : '';
  // LogView.update is idempotent for the same inputs, so a repeated render does no harm.
  const count = useMemo(() => {
    view.update(buffer, { taskSections, folded, only, rank });
    return view.items.length;
  }, [view, buffer, version, taskSections, folded, onlyKey, rank, buffer.dropped]);
  return { view, count };
}

/** The virtualizer over the view's items (rows keep one height unless wrapped or a banner; measured then). */
function useLogVirtualizer(view: LogView, count: number, buffer: LogBuffer, scroller: RefObject<HTMLDivElement | null>, wrap: boolean) {
  // Stable between rebuilds: the virtualizer recomputes every row's place when these change.
  const rebuilds = view.rebuilds;
  const estimateSize = useCallback((i: number) => {
    const it = view.items[i];
    return typeof it === 'number' && buffer.rows[it]?.kind === 'line' ? LINE_H : BANNER_H;
  }, [view, buffer, rebuilds]);
  const getItemKey = useCallback((i: number) => {
    const it = view.items[i];
    return typeof it === 'number' ? it : `${it?.kind}:${it?.task}:${it?.attempt}`;
  }, [view, rebuilds]);
  const getScrollElement = useCallback(() => scroller.current, [scroller]);
  const virtualizer = useVirtualizer({ count, getScrollElement, estimateSize, getItemKey, overscan: 12 });
  // Rows dropped from the front (browser cap) shift every row key, as another buffer does (the
  // whole log taking over from its end: lib/ui/tail-preview.ts); wrapping changes every line's height.
  useEffect(() => virtualizer.measure(), [buffer, buffer.dropped, wrap, virtualizer]);
  return virtualizer;
}

/**
 * When the whole log takes over from its end shown first (another buffer, lib/ui/tail-preview.ts),
 * a reader who scrolled up in the end keeps the same lines in view: the end is the whole log's
 * end, so the same distance from the bottom shows them. (Following, the view sticks to the
 * bottom anyway.) Returns the scroll handler that records the distance.
 */
function useKeepPlaceOnSwap(scroller: RefObject<HTMLDivElement | null>, buffer: LogBuffer, following: boolean, onScroll: () => void) {
  const fromBottom = useRef(0);
  const shown = useRef(buffer);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (shown.current === buffer || !el) return;
    shown.current = buffer;
    if (!following) el.scrollTop = Math.max(0, el.scrollHeight - el.clientHeight - fromBottom.current);
  }, [buffer, following, scroller]);
  return useCallback(() => {
    const el = scroller.current;
    if (el) fromBottom.current = el.scrollHeight - el.clientHeight - el.scrollTop;
    onScroll();
  }, [scroller, onScroll]);
}

/**
 * Going to a buffer row (a search match, an attempt's start): unfolds what hides it, pauses
 * follow, and scrolls there once the view has been rebuilt with it.
 */
function useShowRow(view: LogView, count: number, virtualizer: Virtualizer<HTMLDivElement, Element>, buffer: LogBuffer, setFolded: Dispatch<SetStateAction<ReadonlySet<string>>>, setFollow: (on: boolean) => void) {
  const [pending, setPending] = useState<{ row: number; align: 'start' | 'center' } | null>(null);
  const show = useCallback(
    (row: number, align: 'start' | 'center' = 'center') => {
      setFollow(false);
      setFolded((f) => {
        const open = foldsHiding(buffer.rows, row, f);
        return open.length ? new Set([...f].filter((k) => !open.includes(k))) : f;
      });
      setPending({ row, align });
    },
    [buffer, setFollow, setFolded],
  );
  useEffect(() => {
    if (!pending) return;
    const i = view.indexOfRow(pending.row);
    if (i >= 0) virtualizer.scrollToIndex(i, { align: pending.align });
    setPending(null);
  }, [pending, count, view, virtualizer]);
  return show;
}

export const LogViewer = memo(function LogViewer({ jobId, buffer, version, streamState, restarting, ended, jobTerminal, removed, selected, onShowAll, onViewing, describe, sections, preview }: { jobId: number; buffer: LogBuffer; version: number; streamState: ConnectionState | 'idle'; restarting: boolean; ended: boolean; jobTerminal: boolean; removed: string | null; selected: AttemptKey | null; onShowAll: () => void; onViewing: (r: AttemptKey | null) => void; describe: (r: AttemptKey) => string; sections: SectionInfo & { taskSections: boolean }; preview: PreviewInfo | null }) {
  const rows = buffer.rows;
  const scroller = useRef<HTMLDivElement>(null);
  const [folded, setFolded] = useState<ReadonlySet<string>>(() => new Set());
  const [wrap, setWrap] = useState(false);
  // On a phone long lines wrap from the start (cut off they hid most of each line); the toggle
  // still turns it off. Set after the first render, which must match the server's.
  useEffect(() => {
    if (matchMedia(NARROW).matches) setWrap(true);
  }, []);
  const [showTimes, setShowTimes] = useState(false);
  const [rank, setRank] = useState<number | null>(null);
  const { view, count } = useLogItems(buffer, version, sections.taskSections, folded, selected, rank);
  const items = view.items;
  const virtualizer = useLogVirtualizer(view, count, buffer, scroller, wrap);
  // (The preview's note above the rows takes room from them: following, the end stays in view.)
  const follow = useLogFollow(scroller, [version, count, virtualizer.getTotalSize(), !!preview]);
  const onScroll = useKeepPlaceOnSwap(scroller, buffer, follow.following, follow.onScroll);

  const timeOf = useCallback((r: Parameters<LogBuffer['timeOf']>[0]) => buffer.timeOf(r), [buffer]);
  const show = useShowRow(view, count, virtualizer, buffer, setFolded, follow.setFollow);
  const search = useLogSearch(buffer, version, selected, show);

  // Narrowed to an attempt: from its top. Back to the whole job: where that attempt is in it.
  const last = useRef(selected);
  const selectedKey = selected ? sectionKey(selected.task, selected.attempt) : '';
  useEffect(() => {
    const prev = last.current;
    last.current = selected;
    if (selected) follow.toTop();
    else if (prev && buffer.firstRowOf(prev.task, prev.attempt) >= 0) show(buffer.firstRowOf(prev.task, prev.attempt), 'start');
  }, [selectedKey]);

  const onToggle = useCallback((h: SectionHeader) => {
    const k = sectionKey(h.task, h.attempt);
    setFolded((f) => (f.has(k) ? new Set([...f].filter((x) => x !== k)) : new Set([...f, k])));
  }, []);

  // ── which attempt is in view ──
  const vItems = virtualizer.getVirtualItems();
  const viewing: AttemptKey | null = useMemo(() => {
    if (selected) return selected;
    if (!count) return null;
    if (follow.following) return attemptNear(view, rows, count - 1);
    const top = scroller.current?.scrollTop ?? 0;
    const first = vItems.find((it) => it.end > top + 1);
    return first ? attemptNear(view, rows, first.index) : null;
  }, [selected, vItems[0]?.index, vItems.length, follow.following, count, version]);
  const viewingKey = viewing ? sectionKey(viewing.task, viewing.attempt) : '';
  useEffect(() => onViewing(viewing), [viewingKey]);

  const onFollow = () => (follow.following && !ended ? follow.setFollow(false) : follow.toEnd());
  const searchBox = useRef<HTMLDivElement>(null);
  const keys = [
    { key: 'f', description: 'Follow new lines (again: pause)', run: onFollow },
    { key: 'g', description: 'Go to the first line', run: follow.toTop },
    { key: 'G', description: 'Go to the last line and follow', run: follow.toEnd },
    { key: '/', description: 'Search the log', run: () => searchBox.current?.querySelector('input')?.focus() },
    { key: 't', description: 'Show or hide line times', run: () => setShowTimes((on) => !on) },
  ];
  const { helpOpen, setHelpOpen } = useShortcuts(keys);

  const scope = viewing ? `${selected ? 'Only ' : following(follow.following, ended)}${describe(viewing)}` : '';
  return (
    <section className="card logs" aria-labelledby="logs-title" data-testid="log-viewer" data-following={follow.following} data-rows={rows.length} data-preview={preview ? 'end' : undefined} data-wrap={wrap} data-times={showTimes}>
      <div ref={searchBox} className="logs-head">
        <LogToolbar
          jobId={jobId}
          scope={scope}
          narrowed={!!selected}
          onShowAll={onShowAll}
          search={search}
          ended={ended}
          following={follow.following}
          onFollow={onFollow}
          wrap={wrap}
          onWrap={() => setWrap((w) => !w)}
          times={showTimes}
          onTimes={() => setShowTimes((on) => !on)}
          download={viewing}
          ranks={{ nodes: buffer.maxNodes, rank, onRank: setRank, downloadRank: rank !== null && viewing && rank < buffer.nodesOf(viewing.task, viewing.attempt) ? rank : 0 }}
        />
      </div>
      {preview && (
        <p className="logs-preview" role="status" data-testid="log-preview">
          Showing the end of this long log first. Loading the lines before it{formatMb(preview.loadedBytes)}; line numbers, and search over every line, come once they are all in.
        </p>
      )}
      <div className="logs-wrap">
        <div ref={scroller} className={`log-scroller${wrap ? ' wrapping' : ''}`} onScroll={onScroll} tabIndex={0} role="log" aria-live="off" aria-label="Job log" data-testid="log-scroller">
          {count === 0 ? (
            // Logs the retention policy removed are not an empty log, nor one still to come.
            <div className="log-empty">{removed ?? (selected ? 'Nothing from this attempt yet.' : jobTerminal && ended ? 'This job printed nothing.' : 'Waiting for output…')}</div>
          ) : (
            <LogRows items={items} rows={rows} virtualizer={virtualizer} currentRow={search.currentRow} query={search.q || null} narrowed={!!selected} numbered={buffer.numbered} wrap={wrap} showRank={rank === null && buffer.maxNodes > 1} timeOf={showTimes ? timeOf : null} info={sections} onToggle={onToggle} />
          )}
        </div>
        {!follow.following && !follow.atBottom && count > 0 && (
          <button type="button" className="btn btn-primary btn-sm jump" onClick={follow.toEnd} data-testid="jump-latest">
            {ended ? 'Jump to end ↓' : 'Jump to latest ↓'}
          </button>
        )}
      </div>
      <LogFoot buffer={buffer} ended={ended} streamState={streamState} restarting={restarting} preview={preview} onHelp={() => setHelpOpen(true)} />
      <ShortcutsHelp open={helpOpen} onClose={() => setHelpOpen(false)} shortcuts={keys} />
    </section>
  );
});

const following = (on: boolean, ended: boolean) => (on && !ended ? 'Following ' : '');

/** `: 12.3 MB so far`, or nothing before the first byte has loaded. */
const formatMb = (bytes: number) => (bytes > 0 ? `: ${(bytes / 1e6).toFixed(1)} MB so far` : '');

/** The viewer's footer: the stream's state, how many lines, and the shortcuts. */
function LogFoot({ buffer, ended, streamState, restarting, preview, onHelp }: { buffer: LogBuffer; ended: boolean; streamState: ConnectionState | 'idle'; restarting: boolean; preview: PreviewInfo | null; onHelp: () => void }) {
  return (
    <div className="logs-foot">
      <span data-testid="stream-status" data-state={ended ? 'ended' : streamState} data-restarting={restarting || undefined}>
        {streamText(ended, streamState, restarting)}
      </span>
      <span>{preview ? `the last ${buffer.lineCount.toLocaleString('en-US')} lines` : `${buffer.lineCount.toLocaleString('en-US')} lines`}</span>
      {buffer.dropped > 0 && <span>{buffer.dropped.toLocaleString('en-US')} earlier rows not kept</span>}
      <span className="grow" />
      <button type="button" className="linkish" onClick={onHelp} title="Keyboard shortcuts (?)">
        Shortcuts <kbd>?</kbd>
      </button>
    </div>
  );
}
