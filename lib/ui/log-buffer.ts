/**
 * The dashboard's log model: the rows the log viewer draws for one job — log lines of every
 * attempt of every task, in stream order, with banners between them (attempt started/failed,
 * restart n of m, next task, job ended). Pure logic (no DOM, no React), browser-safe.
 *
 * Bytes arrive in chunks cut anywhere: a line, or a multi-byte UTF-8 character, may span chunks.
 * A multi-node attempt has one log per rank (node), interleaved as they arrive; each of its lines
 * carries its rank. Each attempt — each rank of one — keeps its own streaming UTF-8 decoder and
 * its unfinished last line, which is
 * shown as a row and updated in place when the rest arrives (a log that does not end with a
 * newline still shows its last line). Carriage returns follow a terminal's "rewrite the line"
 * convention, simplified: a line shows the text after its last `\r` (a trailing `\r`, as in
 * CRLF, is ignored), so progress bars show their latest state.
 */

import { timeAt, type TimeEntry } from '../logs/protocol';

/** How a banner reads: neutral, good news, a warning (restart) or a failure. */
export type BannerTone = 'info' | 'success' | 'warning' | 'error';

/** One row of the log viewer. */
export type LogRow =
  | {
      kind: 'line';
      task: number;
      attempt: number;
      /** 1-based line number within the attempt's log file (its raw download; the rank's file); 0: unknown (LogBuffer.startAt). */
      n: number;
      /** The rank (node) whose log the line is from, in a multi-node attempt; absent otherwise. */
      rank?: number;
      /**
       * 1-based line number across the whole view — every attempt of every task, in stream
       * order — what the viewer's gutter shows, so numbers never restart at an attempt.
       */
      seq: number;
      /** The line as printed (ANSI codes kept, `\r` applied, no `\n`). */
      text: string;
      /** Byte offset of the line's first byte in its log (for its time: timeOf); absent when unknown. */
      offset?: number;
    }
  | {
      kind: 'banner';
      /** Dedup key: the same story event (after a reconnect) never shows twice. */
      key: string;
      tone: BannerTone;
      text: string;
      task: number | null;
      attempt: number | null;
    };

/** Options of a LogBuffer. */
export interface LogBufferOptions {
  /**
   * Rows kept before the oldest are dropped (10 % at a time, with a banner saying so).
   * Default 500,000 — the browser stays responsive; the raw file has everything.
   */
  maxRows?: number;
}

interface AttemptState {
  decoder: TextDecoder;
  /** Text of the unfinished last line (no `\n` yet), CR-collapsed. */
  partial: string;
  /** Row index showing `partial`, or -1. */
  partialRow: number;
  /** Lines completed so far (the next line is number lines + 1). */
  lines: number;
  /** Bytes taken in for this attempt (after resume dedup). */
  bytes: number;
  /** Offset of the current (unfinished or next) line's first byte, when known. */
  lineStart: number | undefined;
  /** Offsets just past each newline taken in as bytes and not yet turned into a line. */
  nls: number[];
  /** The log's time index as received (`times` messages; lib/logs/protocol.ts). */
  times: TimeEntry[];
  /** Bytes up to the next newline are dropped: the log was started mid-line (startAt). */
  skipping: boolean;
}

const key = (task: number, attempt: number) => `${task}:${attempt}`;
const at = (offset: number | undefined) => (offset === undefined ? {} : { offset });
const rankKey = (task: number, attempt: number, rank: number) => `${task}:${attempt}:${rank}`;

/**
 * The text a terminal would leave on a line that contains carriage returns: trailing `\r`s are
 * dropped (CRLF), then what follows the last `\r` wins.
 */
export function applyCarriageReturns(line: string): string {
  if (!line.includes('\r')) return line;
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) === 13) end--;
  const s = line.slice(0, end);
  const p = s.lastIndexOf('\r');
  return p < 0 ? s : s.slice(p + 1);
}

/** Keeps the unfinished line small: everything before a `\r` that is not the last char is gone. */
function collapsePartial(s: string): string {
  const p = s.lastIndexOf('\r', s.length - 2);
  return p < 0 ? s : s.slice(p + 1);
}

/** Rows of one job's log story; see the module comment. Not thread-safe (one UI thread). */
export class LogBuffer {
  readonly rows: LogRow[] = [];
  /** Increments on every change (React re-renders on it). */
  version = 0;
  /** Rows dropped from the front so far (maxRows). */
  dropped = 0;
  /** Line rows held now (banners not counted). */
  lineCount = 0;
  /** Line rows ever added (the last line's `seq`; rows dropped by maxRows still count). */
  lineSeq = 0;
  /** Log bytes taken in so far, every attempt and rank. */
  bytesIn = 0;
  private readonly maxRows: number;
  private readonly attempts = new Map<string, AttemptState>();
  /** Ranks of the multi-node attempts seen (attempt key → nodes). */
  private readonly gangs = new Map<string, number>();
  /** The most ranks any attempt of the job has (1 without a multi-node attempt). */
  maxNodes = 1;
  /**
   * False once an attempt's log was started past its first byte (startAt): lines then do not know
   * their number in the raw file (`n` is 0) and the viewer shows none.
   */
  numbered = true;
  private readonly firstRow = new Map<string, number>();
  private readonly banners = new Set<string>();
  private readonly listeners = new Set<() => void>();

  constructor(opts: LogBufferOptions = {}) {
    this.maxRows = Math.max(10, opts.maxRows ?? 500_000);
  }

  /** Calls `fn` after every change; returns the unsubscribe function. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    this.version++;
    this.trim();
    for (const fn of this.listeners) fn();
  }

  private state(task: number, attempt: number, rank: number): AttemptState {
    const k = rankKey(task, attempt, rank);
    let st = this.attempts.get(k);
    if (!st) {
      st = { decoder: new TextDecoder('utf-8'), partial: '', partialRow: -1, lines: 0, bytes: 0, lineStart: 0, nls: [], times: [], skipping: false };
      this.attempts.set(k, st);
    }
    return st;
  }

  private push(row: LogRow): number {
    this.rows.push(row);
    if (row.kind === 'line') this.lineCount++;
    const idx = this.rows.length - 1;
    if (row.task !== null && row.attempt !== null) {
      const k = key(row.task, row.attempt);
      if (!this.firstRow.has(k)) this.firstRow.set(k, idx);
    }
    return idx;
  }

  /**
   * Notes that an attempt runs on `nodes` ranks (its start message says so): its lines, rank 0's
   * included, then carry their rank.
   */
  setNodes(task: number, attempt: number, nodes: number): void {
    if (nodes <= 1) return;
    this.gangs.set(key(task, attempt), nodes);
    if (nodes > this.maxNodes) {
      this.maxNodes = nodes;
      this.changed();
    }
  }

  /** Ranks of an attempt (1 for a one-node attempt). */
  nodesOf(task: number, attempt: number): number {
    return this.gangs.get(key(task, attempt)) ?? 1;
  }

  /**
   * Takes an attempt's log from byte `offset` on instead of its first byte (the end of a long log
   * shown first: lib/ui/tail-preview.ts). The bytes up to the first newline after `offset` are
   * dropped — that line began earlier, possibly mid-character — and the lines' numbers in the raw
   * file are unknown: their `n` is 0 and `numbered` turns false. Call before any byte of it.
   */
  startAt(task: number, attempt: number, offset: number, rank = 0): void {
    const st = this.state(task, attempt, rank);
    if (offset <= 0 || st.bytes > 0) return;
    st.bytes = offset;
    st.lineStart = undefined;
    st.skipping = true;
    this.numbered = false;
  }

  /** Appends raw log bytes of an attempt, of `rank` for a multi-node one (decoded as UTF-8, streaming). */
  appendBytes(task: number, attempt: number, bytes: Uint8Array, rank = 0): void {
    const st = this.state(task, attempt, rank);
    if (st.skipping) {
      const nl = bytes.indexOf(0x0a);
      if (nl < 0) {
        st.bytes += bytes.byteLength;
        return;
      }
      st.skipping = false;
      st.bytes += nl + 1;
      st.lineStart = st.bytes;
      bytes = bytes.subarray(nl + 1);
      if (bytes.byteLength === 0) return;
    }
    this.bytesIn += bytes.byteLength;
    // A newline byte is a newline character in UTF-8: the k-th '\n' decoded is the k-th found here.
    for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) st.nls.push(st.bytes + i + 1);
    st.bytes += bytes.byteLength;
    const text = st.decoder.decode(bytes, { stream: true });
    if (text) this.appendText(task, attempt, text, rank);
  }

  /** Appends decoded text of an attempt, of `rank` for a multi-node one (appendBytes decodes, then calls this). */
  appendText(task: number, attempt: number, text: string, rank = 0): void {
    const st = this.state(task, attempt, rank);
    const r = rank > 0 || this.gangs.has(key(task, attempt)) ? { rank } : {};
    let start = 0;
    let idx: number;
    while ((idx = text.indexOf('\n', start)) !== -1) {
      const line = applyCarriageReturns(st.partial + text.slice(start, idx));
      st.partial = '';
      st.lines++;
      if (st.partialRow >= 0) {
        const row = this.rows[st.partialRow];
        if (row && row.kind === 'line') row.text = line;
        st.partialRow = -1;
      } else {
        this.push({ kind: 'line', task, attempt, n: this.numbered ? st.lines : 0, seq: ++this.lineSeq, text: line, ...r, ...at(st.lineStart) });
      }
      st.lineStart = st.nls.shift();
      start = idx + 1;
    }
    const rest = text.slice(start);
    if (rest) {
      st.partial = rest.includes('\r') ? collapsePartial(st.partial + rest) : st.partial + rest;
      const shown = applyCarriageReturns(st.partial);
      const row = st.partialRow >= 0 ? this.rows[st.partialRow] : undefined;
      if (row && row.kind === 'line') row.text = shown;
      else st.partialRow = this.push({ kind: 'line', task, attempt, n: this.numbered ? st.lines + 1 : 0, seq: ++this.lineSeq, text: shown, ...r, ...at(st.lineStart) });
    }
    this.changed();
  }

  /**
   * Adds entries of an attempt's time index (of `rank` in a multi-node one), in order; entries
   * not past the last one held are ignored (a resume may send some again).
   */
  addTimes(task: number, attempt: number, entries: readonly TimeEntry[], rank = 0): void {
    const st = this.state(task, attempt, rank);
    let added = false;
    for (const e of entries) {
      const last = st.times.at(-1);
      if (last && e[0] <= last[0]) continue;
      st.times.push(e);
      added = true;
    }
    if (added) this.changed();
  }

  /**
   * When a line's first byte was written (unix ms), from its log's time index; null when no
   * index entry covers it (an attempt from before time indexes, or not received yet) or the
   * time is unknown (bytes written before the index began: entry time 0).
   */
  timeOf(row: Extract<LogRow, { kind: 'line' }>): number | null {
    if (row.offset === undefined) return null;
    const st = this.attempts.get(rankKey(row.task, row.attempt, row.rank ?? 0));
    const ms = st ? timeAt(st.times, row.offset) : null;
    return ms ? ms : null;
  }

  /**
   * The attempt's log is complete: flushes its decoder (a truncated multi-byte character shows
   * as U+FFFD). Its unfinished last line stays as the last line.
   */
  endAttempt(task: number, attempt: number): void {
    for (let rank = 0; rank < this.nodesOf(task, attempt); rank++) {
      const st = this.attempts.get(rankKey(task, attempt, rank));
      if (!st) continue;
      const tail = st.decoder.decode();
      if (tail) this.appendText(task, attempt, tail, rank);
    }
  }

  /**
   * Adds a banner unless one with the same key was added before (a resumed stream may repeat an
   * event). Returns false for a repeat.
   */
  addBanner(b: { key: string; tone: BannerTone; text: string; task?: number | null; attempt?: number | null }): boolean {
    if (this.banners.has(b.key)) return false;
    this.banners.add(b.key);
    const row: LogRow = { kind: 'banner', key: b.key, tone: b.tone, text: b.text, task: b.task ?? null, attempt: b.attempt ?? null };
    // A banner after an unfinished line must not be overwritten by that line's rest: the
    // line keeps its row (updated in place), the banner goes after it.
    this.push(row);
    this.changed();
    return true;
  }

  /** True when a banner with this key exists. */
  hasBanner(k: string): boolean {
    return this.banners.has(k);
  }

  /** Index of the first row of an attempt (its start banner or first line), or -1. */
  firstRowOf(task: number, attempt: number): number {
    return this.firstRow.get(key(task, attempt)) ?? -1;
  }

  /** Lines and bytes received for an attempt (every rank of a multi-node one). */
  attemptStats(task: number, attempt: number): { lines: number; bytes: number } {
    const out = { lines: 0, bytes: 0 };
    for (let rank = 0; rank < this.nodesOf(task, attempt); rank++) {
      const st = this.attempts.get(rankKey(task, attempt, rank));
      if (st) {
        out.lines += st.lines + (st.partial ? 1 : 0);
        out.bytes += st.bytes;
      }
    }
    return out;
  }

  /**
   * Row indices whose plain text contains `query` (case-insensitive unless `caseSensitive`).
   * `toPlain` strips escape codes (pass ansiToPlain); banners are searched too.
   */
  search(query: string, toPlain: (s: string) => string, caseSensitive = false): number[] {
    if (!query) return [];
    const q = caseSensitive ? query : query.toLowerCase();
    const out: number[] = [];
    for (let i = 0; i < this.rows.length; i++) {
      const r = this.rows[i];
      let t = r.kind === 'line' ? toPlain(r.text) : r.text;
      if (!caseSensitive) t = t.toLowerCase();
      if (t.includes(q)) out.push(i);
    }
    return out;
  }

  /** Drops the oldest rows past maxRows, keeping every stored index consistent. */
  private trim(): void {
    if (this.rows.length <= this.maxRows) return;
    const n = Math.max(1, Math.ceil(this.maxRows / 10)) + (this.rows.length - this.maxRows);
    for (let i = 0; i < n; i++) if (this.rows[i].kind === 'line') this.lineCount--;
    this.rows.splice(0, n);
    this.dropped += n;
    for (const st of this.attempts.values()) if (st.partialRow >= 0) st.partialRow = st.partialRow >= n ? st.partialRow - n : -1;
    for (const [k, v] of this.firstRow) {
      if (v >= n) this.firstRow.set(k, v - n);
      else this.firstRow.set(k, 0);
    }
    const first = this.rows[0];
    const noticeKey = 'dropped';
    const text = `${this.dropped.toLocaleString('en-US')} earlier rows are not shown here (browser limit) — download the raw log for everything.`;
    if (first && first.kind === 'banner' && first.key === noticeKey) first.text = text;
    else {
      this.rows.unshift({ kind: 'banner', key: noticeKey, tone: 'warning', text, task: null, attempt: null });
      for (const st of this.attempts.values()) if (st.partialRow >= 0) st.partialRow++;
      for (const [k, v] of this.firstRow) this.firstRow.set(k, v + 1);
    }
  }
}
