/**
 * What the log viewer draws from a LogBuffer: its rows grouped into foldable sections, GitHub
 * Actions style — in a pipeline a section per task, in it a section per attempt; in a one-task
 * job a section per attempt — optionally narrowed to one attempt. An attempt's section header is
 * its "attempt started" banner (so the story reads as before); a task's header is a row of its
 * own. Pure logic (no DOM, no React), browser-safe.
 *
 * The view is rebuilt incrementally while rows are appended (the common case: a log streaming
 * in), and from scratch when the folds, the narrowing or the buffer's front (rows dropped past
 * its cap) change.
 */
import type { LogBuffer, LogRow } from './log-buffer';

/** An attempt id (task index from 0, attempt number from 1). */
export interface AttemptKey {
  task: number;
  attempt: number;
}

/** A section header the viewer draws with a fold toggle. */
export interface SectionHeader {
  kind: 'task' | 'attempt';
  task: number;
  /** The attempt (attempt headers only). */
  attempt: number | null;
  /** The buffer row shown as the header (an attempt's start banner), or -1 for a drawn one. */
  row: number;
  /** Log lines in the section (folded or not). */
  lines: number;
  /** The latest attempt seen in the section (for a task: its last attempt so far). */
  lastAttempt: number;
  folded: boolean;
}

/** One drawn item: a buffer row index, or a section header. */
export type ViewItem = number | SectionHeader;

/** What shapes a view besides the rows. */
export interface ViewOptions {
  /** Draw a header per task (pipelines); a one-task job has attempt sections only. */
  taskSections: boolean;
  /** Folded sections, by sectionKey(). */
  folded: ReadonlySet<string>;
  /** Only this attempt's rows (no job-level banners, no other attempts), or null for all. */
  only: AttemptKey | null;
  /**
   * Only this rank's lines of multi-node attempts (banners and one-node attempts' lines stay), or
   * null/absent for every rank's, interleaved as they arrived (each line shows its rank).
   */
  rank?: number | null;
}

/** The fold key of a task (`task:0`) or an attempt (`attempt:0:2`) section. */
export function sectionKey(task: number, attempt: number | null = null): string {
  return attempt === null ? `task:${task}` : `attempt:${task}:${attempt}`;
}

const isStartBanner = (r: LogRow, task: number, attempt: number) => r.kind === 'banner' && r.key === `start:${task}:${attempt}`;

/** The drawn items of one buffer; see the module comment. */
export class LogView {
  items: ViewItem[] = [];
  /** Counts rebuilds from scratch (items at an index may then be others): a cache key. */
  rebuilds = 0;
  /** Rows of the buffer taken into `items` so far. */
  private done = 0;
  private dropped = -1;
  private optsKey = '';
  private task: SectionHeader | null = null;
  private attempt: SectionHeader | null = null;

  /**
   * Brings the view up to date with `buffer` and `opts`; answers true when `items` changed.
   * Rows updated in place (a line completed) change nothing here: items point at rows.
   */
  update(buffer: LogBuffer, opts: ViewOptions): boolean {
    const key = `${opts.taskSections}|${[...opts.folded].sort().join(',')}|${opts.only ? sectionKey(opts.only.task, opts.only.attempt) : ''}|${opts.rank ?? ''}`;
    if (key !== this.optsKey || buffer.dropped !== this.dropped || buffer.rows.length < this.done) {
      this.items = [];
      this.done = 0;
      this.task = this.attempt = null;
      this.optsKey = key;
      this.dropped = buffer.dropped;
      this.rebuilds++;
    }
    const before = this.items.length;
    const rows = buffer.rows;
    let changed = false;
    for (; this.done < rows.length; this.done++) changed = this.take(rows, this.done, opts) || changed;
    return changed || this.items.length !== before;
  }

  /** Adds row `i`; answers true when a header's line count changed. */
  private take(rows: LogRow[], i: number, opts: ViewOptions): boolean {
    const r = rows[i];
    if (r.task === null || r.attempt === null) {
      // A job-level banner (a task cancelled before it ran, the job's end, rows not kept).
      if (opts.only) return false;
      this.task = this.attempt = null;
      this.items.push(i);
      return false;
    }
    if (opts.only && (opts.only.task !== r.task || opts.only.attempt !== r.attempt)) return false;
    if (opts.rank != null && r.kind === 'line' && r.rank !== undefined && r.rank !== opts.rank) return false;
    if (opts.taskSections && !opts.only && this.task?.task !== r.task) {
      this.task = { kind: 'task', task: r.task, attempt: null, row: -1, lines: 0, lastAttempt: r.attempt, folded: opts.folded.has(sectionKey(r.task)) };
      this.attempt = null;
      this.items.push(this.task);
    }
    if (this.attempt?.task !== r.task || this.attempt.attempt !== r.attempt) {
      const start = isStartBanner(r, r.task, r.attempt);
      this.attempt = { kind: 'attempt', task: r.task, attempt: r.attempt, row: start ? i : -1, lines: 0, lastAttempt: r.attempt, folded: opts.folded.has(sectionKey(r.task, r.attempt)) };
      if (this.task) this.task.lastAttempt = r.attempt;
      if (!this.task?.folded || opts.only) this.items.push(this.attempt);
      if (start) return false;
    }
    if (r.kind === 'line') {
      this.attempt.lines++;
      if (this.task && !opts.only) this.task.lines++;
    }
    const hidden = (this.task?.folded && !opts.only) || this.attempt.folded;
    if (!hidden) this.items.push(i);
    return r.kind === 'line';
  }

  /** The attempt item `index` belongs to (its header's, a row's), or null for a job-level row. */
  attemptAt(rows: LogRow[], index: number): AttemptKey | null {
    const it = this.items[index];
    if (it === undefined) return null;
    if (typeof it !== 'number') return { task: it.task, attempt: it.lastAttempt };
    const r = rows[it];
    return r && r.task !== null && r.attempt !== null ? { task: r.task, attempt: r.attempt } : null;
  }

  /** The item index showing buffer row `row` (a row, or the header it is), or -1 when not drawn. */
  indexOfRow(row: number): number {
    // Items are in row order: binary search over the row each item stands for.
    let lo = 0;
    let hi = this.items.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = rowOf(this.items, mid);
      if (at === row) return mid;
      if (at < row) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/** The buffer row an item stands for: its own, a header's banner, or (drawn headers) the next row's, minus ½. */
function rowOf(items: ViewItem[], i: number): number {
  const it = items[i];
  if (typeof it === 'number') return it;
  if (it.row >= 0) return it.row;
  for (let j = i + 1; j < items.length; j++) {
    const n = items[j];
    if (typeof n === 'number') return n - 0.5;
    if (n.row >= 0) return n.row - 0.5;
  }
  return Number.MAX_SAFE_INTEGER;
}

/**
 * The attempt nearest to item `index` for "what is in view": the item's own, else the next one
 * with an attempt, else the previous one.
 */
export function attemptNear(view: LogView, rows: LogRow[], index: number): AttemptKey | null {
  for (let j = index; j < view.items.length; j++) {
    const a = view.attemptAt(rows, j);
    if (a) return a;
  }
  for (let j = index - 1; j >= 0; j--) {
    const a = view.attemptAt(rows, j);
    if (a) return a;
  }
  return null;
}

/**
 * The fold keys to remove so that buffer row `row` is drawn (its task's and its attempt's),
 * or an empty list when it is not folded away.
 */
export function foldsHiding(rows: LogRow[], row: number, folded: ReadonlySet<string>): string[] {
  const r = rows[row];
  if (!r || r.task === null || r.attempt === null) return [];
  return [sectionKey(r.task), sectionKey(r.task, r.attempt)].filter((k) => folded.has(k));
}
