import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { logSize, openLog, type LogSource } from './source';

export { logSize } from './source';

/**
 * Reading attempt logs (docs/design.md §8): one append-only file per attempt, read by byte offset and
 * never loaded whole — plain or, once finished, compressed: both open through openLog()
 * (lib/logs/source.ts), and offsets are always in log bytes. Two readers live here:
 * - readLogRange(): one bounded byte range, ending (and starting) on a UTF-8 character boundary,
 *   for the REST endpoint;
 * - LogFollower: follows one file from an offset as it grows (fs.watch plus a poll fallback),
 *   tolerating a file that does not exist yet; a file that shrank is an error.
 */

/** Thrown when a log is shorter than an offset the reader already reached (it was truncated). */
export class LogTruncatedError extends Error {
  constructor(
    readonly file: string,
    readonly size: number,
    readonly offset: number,
  ) {
    super(`log ${file} shrank to ${size} bytes under the reader at offset ${offset} (logs are append-only)`);
    this.name = 'LogTruncatedError';
  }
}

/** Thrown by readLogRange() when `offset` is past the end of the file. */
export class OffsetPastEndError extends Error {
  constructor(
    readonly offset: number,
    readonly size: number,
  ) {
    super(`offset ${offset} is past the end of the log (size ${size} bytes)`);
    this.name = 'OffsetPastEndError';
  }
}

/** True for a UTF-8 continuation byte (10xxxxxx). */
function isCont(b: number): boolean {
  return (b & 0xc0) === 0x80;
}

/** Length of the UTF-8 sequence a lead byte starts (1 for ASCII or an invalid lead byte). */
function seqLen(b: number): number {
  if (b >= 0xf0 && b <= 0xf7) return 4;
  if (b >= 0xe0) return b <= 0xef ? 3 : 1;
  if (b >= 0xc0) return 2;
  return 1;
}

/**
 * The largest `n <= end` such that `buf[0, n)` does not end inside a multi-byte UTF-8 character
 * (looks back at most 3 bytes; invalid bytes count as single characters and are never held
 * back). `buf.length` may exceed `end`: bytes past `end` are not looked at.
 */
export function utf8BoundaryBefore(buf: Uint8Array, end: number): number {
  end = Math.min(end, buf.length);
  // Find the lead byte of the last character that starts before `end`.
  let i = end - 1;
  const stop = Math.max(0, end - 4);
  while (i >= stop && isCont(buf[i])) i--;
  if (i < stop || i < 0) return end; // no lead byte within reach: invalid data, do not hold back
  const need = seqLen(buf[i]);
  return i + need > end && need > 1 ? i : end;
}

/** The number of leading continuation bytes (0–3) to skip so a range starts on a character. */
export function utf8SkipContinuation(buf: Uint8Array): number {
  let i = 0;
  while (i < 3 && i < buf.length && isCont(buf[i])) i++;
  return i;
}

/** One bounded byte range of a log. */
export interface RangeRead {
  /** Offset of the first byte of `data` (may be up to 3 bytes past the requested offset). */
  offset: number;
  /** offset + data.length: where the next read starts. */
  nextOffset: number;
  /** File size when read (bytes). */
  size: number;
  data: Buffer;
}

/**
 * Reads at most `limit` bytes of `file` from `offset`. The range never splits a UTF-8 character:
 * it starts after any continuation bytes at `offset` and ends before an incomplete character —
 * except at the end of a `complete` log (the attempt ended), whose last bytes are returned as
 * they are. When the limit is smaller than the first character, that one character is returned
 * whole (a reader always makes progress). A missing file (or null path) reads as empty.
 * Reads only the requested bytes (plus at most 3), never the whole file.
 *
 * @throws OffsetPastEndError when offset > size; RangeError for a negative offset or limit < 1.
 */
export async function readLogRange(file: string | null | undefined, offset: number, limit: number, opts: { complete?: boolean } = {}): Promise<RangeRead> {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`offset must be a non-negative integer, got ${offset}`);
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const src = await openLog(file);
  try {
    const size = src ? await src.size() : 0;
    if (offset > size) throw new OffsetPastEndError(offset, size);
    if (!src || offset === size) return { offset, nextOffset: offset, size, data: Buffer.alloc(0) };
    // Read 3 bytes on each side of the range so both ends can be moved to a character boundary.
    const want = Math.min(limit + 3, size - offset);
    const buf = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const bytesRead = await src.read(buf, got, want - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    const view = buf.subarray(0, got);
    const skip = utf8SkipContinuation(view);
    const start = skip;
    let end = Math.min(got, start + limit);
    const atEof = offset + end >= size;
    if (!(atEof && opts.complete)) {
      const b = utf8BoundaryBefore(view, end);
      if (b > start) end = b;
      else if (b === start && end > start) {
        // The limit is smaller than the first character: return that character whole.
        const whole = start + seqLen(view[start]);
        end = whole <= got ? whole : start;
      }
    }
    return { offset: offset + start, nextOffset: offset + end, size, data: Buffer.from(view.subarray(start, end)) };
  } finally {
    await src?.close();
  }
}

/** Options of LogFollower. */
export interface FollowOptions {
  /** Poll interval (ms) of wait() when fs.watch says nothing (default 250). */
  pollMs?: number;
  /** Called on every fs.watch event for the file (or its creation); must not throw. */
  onChange?: () => void;
}

/**
 * Follows one attempt's log from an offset: `read()` returns the next bytes (never more than
 * asked), `wait()` resolves when the file may have grown (fs.watch event, or the poll interval).
 * A file that does not exist yet reads as empty; one that became shorter than the offset already
 * read throws LogTruncatedError. Holds one open log (lib/logs/source.ts: the plain file, kept
 * even when it is compressed and unlinked meanwhile, or its compressed form) and, for a plain
 * one, one watcher; call close().
 */
export class LogFollower {
  private src: LogSource | null = null;
  private watcher: FSWatcher | null = null;
  private watching: 'file' | 'dir' | null = null;
  private wake: (() => void) | null = null;
  private changed = false;
  private closed = false;
  private readonly pollMs: number;
  private readonly onChange?: () => void;

  /**
   * @param file absolute path of the log file (it may not exist yet)
   * @param offset byte offset of the next byte to read
   */
  constructor(
    readonly file: string,
    public offset: number,
    opts: FollowOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? 250;
    this.onChange = opts.onChange;
  }

  private async ensureOpen(): Promise<boolean> {
    if (this.src) return true;
    if (this.closed) return false;
    this.src = await openLog(this.file, { sequential: true });
    if (!this.src) {
      this.ensureWatch();
      return false;
    }
    if (this.closed) {
      await this.src.close().catch(() => undefined);
      this.src = null;
      return false;
    }
    this.ensureWatch();
    return true;
  }

  private ensureWatch(): void {
    // A compressed log is finished: it never changes, there is nothing to watch.
    if (this.closed || this.src?.compressed) return;
    const want = this.src ? 'file' : 'dir';
    if (this.watching === want) return;
    this.watcher?.close();
    this.watcher = null;
    this.watching = null;
    try {
      const target = want === 'file' ? this.file : path.dirname(this.file);
      const base = path.basename(this.file);
      const w = watch(target, { persistent: false }, (_event, name) => {
        if (want === 'dir' && name && name !== base) return;
        this.signal();
      });
      w.on('error', () => {
        // The poll fallback keeps working; drop the broken watcher.
        if (this.watcher === w) {
          this.watcher = null;
          this.watching = null;
        }
        w.close();
      });
      this.watcher = w;
      this.watching = want;
    } catch {
      // Folder missing or watch limit reached: the poll fallback covers it.
    }
  }

  private signal(): void {
    this.changed = true;
    const w = this.wake;
    this.wake = null;
    w?.();
    if (!this.closed) this.onChange?.();
  }

  /**
   * Reads up to `max` bytes at the current offset into `buf` at `at`, advances the offset, and
   * returns the number of bytes read (0 at the end of the file, or when it does not exist yet).
   * @throws LogTruncatedError when the file is shorter than the offset.
   */
  async readInto(buf: Uint8Array, at: number, max: number): Promise<number> {
    this.changed = false;
    if (!(await this.ensureOpen())) {
      if (this.offset > 0) throw new LogTruncatedError(this.file, 0, this.offset);
      return 0;
    }
    const bytesRead = await this.src!.read(buf, at, max, this.offset);
    if (bytesRead === 0) {
      const size = await this.src!.size();
      if (size < this.offset) throw new LogTruncatedError(this.file, size, this.offset);
      return 0;
    }
    this.offset += bytesRead;
    return bytesRead;
  }

  /** The file's size now (bytes; 0 when it does not exist). */
  async size(): Promise<number> {
    if (this.src) return this.src.size();
    return logSize(this.file);
  }

  /**
   * Bytes that can be read now from the offset (0 when the file does not exist yet). Opens the
   * file (and its watcher) when it appears.
   * @throws LogTruncatedError when the file is shorter than the offset.
   */
  async available(): Promise<number> {
    if (!(await this.ensureOpen())) {
      if (this.offset > 0) throw new LogTruncatedError(this.file, 0, this.offset);
      return 0;
    }
    const size = await this.src!.size();
    if (size < this.offset) throw new LogTruncatedError(this.file, size, this.offset);
    return size - this.offset;
  }

  /**
   * Resolves when the file may have changed since the last read (at once if it already did),
   * after `pollMs` at the latest, or when `also` resolves.
   */
  wait(also?: Promise<unknown>): Promise<void> {
    if (this.changed || this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
      also?.then(done, done);
    });
  }

  /** Releases the file descriptor and the watcher. */
  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    this.watcher = null;
    const src = this.src;
    this.src = null;
    this.signal();
    await src?.close();
  }
}
