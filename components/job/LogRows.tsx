'use client';
/**
 * The drawn rows of the log viewer (virtualised by @tanstack/react-virtual: only the rows in
 * the window are in the DOM): log lines, story banners, and section headers with their fold
 * toggle (lib/ui/log-view.ts). Each row kind is memoised so scrolling re-renders only rows that
 * enter the window. Banners and headers wrap and are measured; log lines keep one fixed height
 * unless wrapping is on, then they are measured too. A multi-node attempt's line shows its rank
 * before the text when every rank is shown; with times on, each line shows when it was written
 * (its log's time index; a dash when unknown).
 */
import type { Virtualizer } from '@tanstack/react-virtual';
import { memo } from 'react';
import { formatClockMs } from '@/lib/ui/format';
import type { LogRow } from '@/lib/ui/log-buffer';
import type { SectionHeader, ViewItem } from '@/lib/ui/log-view';
import { StatusBadge } from '../StatusBadge';
import { LogText } from './LogLine';

/** Row heights (px); must match the CSS line-height (20px) and a one-line banner (wrapped banners are measured). */
export const LINE_H = 20;
export const BANNER_H = 32;

/** What the rows need to know about the job's tasks. */
export interface SectionInfo {
  /** "Task 1 (train)" for a task header; "Attempt 2" / "Task 1 (train), attempt 2" for a drawn attempt header. */
  title: (h: SectionHeader) => string;
  /** The task's status, when known (task headers show it). */
  taskStatus: (task: number) => string | undefined;
}

const plural = (n: number, one: string) => `${n.toLocaleString('en-US')} ${one}${n === 1 ? '' : 's'}`;

const LineRow = memo(function LineRow({ row, index, start, size, current, query, lineNo, wrap, showRank, time, measure }: { row: Extract<LogRow, { kind: 'line' }>; text: string; index: number; start: number; size: number; current: boolean; query: string | null; lineNo: number | null; wrap: boolean; showRank: boolean; time: number | null | undefined; measure: (el: Element | null) => void }) {
  const rank = row.rank !== undefined ? ` · rank ${row.rank}` : '';
  const where = row.n > 0 ? `line ${row.n} of its raw log` : 'its number comes once the whole log is in';
  return (
    <div ref={wrap ? measure : undefined} data-index={index} className={`log-row${current ? ' current-match' : ''}${wrap ? ' wrap' : ''}`} style={{ transform: `translateY(${start}px)`, height: wrap ? undefined : size }} data-testid="log-line" data-rank={row.rank}>
      <span className="log-ln" aria-hidden="true" title={`task ${row.task} · attempt ${row.attempt}${rank} · ${where}`}>
        {lineNo}
      </span>
      {time !== undefined && (
        <span className="log-time" data-testid="log-time" data-ms={time ?? undefined} title={time ? new Date(time).toISOString() : 'No time recorded for this line'}>
          {time ? formatClockMs(new Date(time).toISOString()) : '–'}
        </span>
      )}
      {showRank && row.rank !== undefined && <span className="log-rank" data-testid="log-rank">{`rank ${row.rank}`}</span>}
      <span className="log-text">
        <LogText text={row.text} query={query} />
      </span>
    </div>
  );
});

const BannerRow = memo(function BannerRow({ row, index, start, current, measure }: { row: Extract<LogRow, { kind: 'banner' }>; text: string; index: number; start: number; current: boolean; measure: (el: Element | null) => void }) {
  return (
    <div ref={measure} data-index={index} className={`log-banner tone-${row.tone}${current ? ' current-match' : ''}`} style={{ transform: `translateY(${start}px)`, minHeight: BANNER_H }} data-testid="log-banner" data-key={row.key}>
      <span>{row.text}</span>
    </div>
  );
});

const SectionRow = memo(function SectionRow({ h, banner, lines, folded, index, start, current, title, status, onToggle, measure }: { h: SectionHeader; banner: Extract<LogRow, { kind: 'banner' }> | null; lines: number; folded: boolean; index: number; start: number; current: boolean; title: string; status: string | undefined; onToggle: (h: SectionHeader) => void; measure: (el: Element | null) => void }) {
  const what = h.kind === 'task' ? `task ${h.task}` : `attempt ${h.attempt} of task ${h.task}`;
  const tone = banner ? `log-banner tone-${banner.tone}` : h.kind === 'task' ? 'log-task' : 'log-banner tone-info';
  return (
    <div
      ref={measure}
      data-index={index}
      className={`log-section ${tone}${current ? ' current-match' : ''}`}
      style={{ transform: `translateY(${start}px)`, minHeight: BANNER_H }}
      data-testid={banner ? 'log-banner' : 'log-section'}
      data-section={h.kind}
      data-folded={folded}
      data-key={banner?.key}
    >
      <button type="button" className="fold" aria-expanded={!folded} aria-label={`${folded ? 'Unfold' : 'Fold'} ${what}`} title={`${folded ? 'Show' : 'Hide'} the lines of ${what}`} onClick={() => onToggle(h)}>
        {folded ? '▸' : '▾'}
      </button>
      <span>{banner ? banner.text : title}</span>
      {status && <StatusBadge status={status} />}
      <em className="section-meta">
        {plural(lines, 'line')}
        {folded ? ' hidden' : ''}
      </em>
    </div>
  );
});

/** The virtualised rows; see the module comment. */
export function LogRows({ items, rows, virtualizer, currentRow, query, narrowed, numbered, wrap, showRank, timeOf, info, onToggle }: { items: ViewItem[]; rows: LogRow[]; virtualizer: Virtualizer<HTMLDivElement, Element>; currentRow: number; query: string | null; narrowed: boolean; numbered: boolean; wrap: boolean; showRank: boolean; timeOf: ((row: Extract<LogRow, { kind: 'line' }>) => number | null) | null; info: SectionInfo; onToggle: (h: SectionHeader) => void }) {
  const measure = virtualizer.measureElement;
  return (
    <div className="log-inner" style={{ height: virtualizer.getTotalSize() }}>
      {virtualizer.getVirtualItems().map((v) => {
        const it = items[v.index];
        if (it === undefined) return null;
        if (typeof it !== 'number') {
          const banner = it.row >= 0 && rows[it.row]?.kind === 'banner' ? (rows[it.row] as Extract<LogRow, { kind: 'banner' }>) : null;
          const status = it.kind === 'task' ? info.taskStatus(it.task) : undefined;
          return <SectionRow key={v.key} h={it} banner={banner} lines={it.lines} folded={it.folded} index={v.index} start={v.start} current={it.row >= 0 && it.row === currentRow} title={info.title(it)} status={status} onToggle={onToggle} measure={measure} />;
        }
        const r = rows[it];
        if (!r) return null;
        if (r.kind === 'banner') return <BannerRow key={v.key} row={r} text={r.text} index={v.index} start={v.start} current={it === currentRow} measure={measure} />;
        // Narrowed to one attempt, a line is numbered as in its raw file; else across the whole view;
        // the end of a long log shown first has no numbers yet (lib/ui/tail-preview.ts).
        return <LineRow key={v.key} row={r} text={r.text} index={v.index} start={v.start} size={v.size} current={it === currentRow} query={query} lineNo={!numbered ? null : narrowed && !showRank ? r.n : r.seq} wrap={wrap} showRank={showRank} time={timeOf ? timeOf(r) : undefined} measure={measure} />;
      })}
    </div>
  );
}
