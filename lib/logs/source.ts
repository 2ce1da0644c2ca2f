import { fstatSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { GzLog } from './gzlog';
import { localDevice } from './local-fs';

/**
 * The one way every reader opens an attempt's log (docs/design.md §8 "Compressed logs"): a log is
 * its plain file (`run.log`, growing while the attempt runs) or, once finished and compressed,
 * `run.log.gz` beside it (lib/logs/gzlog.ts) — never both for a reader: openLog() tries the plain
 * file first and the compressed one only when the plain one is gone, and the compression renames
 * the `.gz` in place before it unlinks the plain file. A reader that opened the plain file keeps
 * reading it after the unlink (its descriptor holds the file). Offsets and sizes are always in
 * log (uncompressed) bytes.
 */

/** An open log, plain or compressed. Close it. */
export interface LogSource {
  /** True for a compressed (finished) log. */
  readonly compressed: boolean;
  /** The log's size now (bytes): a plain file may still grow; a compressed one never does. */
  size(): Promise<number>;
  /**
   * Copies up to `len` log bytes at position `pos` into `buf` at `at`.
   * @returns the bytes copied (0 at the end).
   */
  read(buf: Uint8Array, at: number, len: number, pos: number): Promise<number>;
  /** The log's first `size` bytes as a stream (256 KiB pieces); closes the source when it ends or is destroyed. */
  stream(size: number): Readable;
  /**
   * A compressed log's file as it is — a gzip stream of the whole log — and its byte length;
   * closes the source when it ends or is destroyed. Null for a plain log.
   */
  gzipFile(): { stream: Readable; bytes: number } | null;
  close(): Promise<void>;
}

/** The compressed form's path beside a log: `run.log` → `run.log.gz`. */
export function gzPathOf(file: string): string {
  return `${file}.gz`;
}

function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

const PIECE = 256 * 1024;

class PlainLog implements LogSource {
  readonly compressed = false;
  /** On a local file system (lib/logs/local-fs.ts): size() is an fstat done at once; null until the first size(). */
  private local: boolean | null = null;
  constructor(
    private readonly fh: FileHandle,
    private readonly file: string,
  ) {}

  async size(): Promise<number> {
    // A stream asks the size before every read and at an attempt's end (docs/design.md §8): on a
    // local disk an fstat is microseconds, an async one waits for a busy event loop.
    if (this.local) return fstatSync(this.fh.fd).size;
    const st = await this.fh.stat();
    this.local ??= await localDevice(st.dev, path.dirname(this.file));
    return st.size;
  }

  async read(buf: Uint8Array, at: number, len: number, pos: number): Promise<number> {
    return (await this.fh.read(buf, at, len, pos)).bytesRead;
  }

  stream(size: number): Readable {
    if (size <= 0) {
      void this.close();
      return Readable.from([]);
    }
    return this.fh.createReadStream({ start: 0, end: size - 1, highWaterMark: PIECE, autoClose: true, emitClose: true });
  }

  gzipFile(): null {
    return null;
  }

  async close(): Promise<void> {
    await this.fh.close().catch(() => undefined);
  }
}

class CompressedLog implements LogSource {
  readonly compressed = true;
  constructor(private readonly gz: GzLog) {}

  size(): Promise<number> {
    return Promise.resolve(this.gz.size);
  }

  read(buf: Uint8Array, at: number, len: number, pos: number): Promise<number> {
    return this.gz.read(buf, at, len, pos);
  }

  stream(): Readable {
    // One gzip member: gunzip inflates it front to back and checks the log's CRC at the end.
    const raw = this.gz.handle.createReadStream({ start: 0, highWaterMark: PIECE, autoClose: true, emitClose: true });
    return pipeline(raw, zlib.createGunzip({ chunkSize: 64 * 1024 }), () => undefined);
  }

  gzipFile(): { stream: Readable; bytes: number } {
    return { stream: this.gz.handle.createReadStream({ start: 0, highWaterMark: PIECE, autoClose: true, emitClose: true }), bytes: this.gz.index.diskBytes };
  }

  close(): Promise<void> {
    return this.gz.close();
  }
}

/**
 * Opens a log: its plain file, else its compressed form (see the module comment).
 * `sequential`: the caller reads front to back (a compressed log inflates one segment ahead).
 * @returns null when neither exists (or `file` is null): an empty log, or one not written yet.
 * @throws CorruptLogError (lib/logs/gzlog.ts) for a compressed file that does not check out.
 */
export async function openLog(file: string | null | undefined, opts: { sequential?: boolean } = {}): Promise<LogSource | null> {
  if (!file) return null;
  try {
    return new PlainLog(await open(file, 'r'), file);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const gz = await GzLog.open(gzPathOf(file), opts);
  return gz ? new CompressedLog(gz) : null;
}

/** The size of a log in bytes (uncompressed), or 0 when `file` is null or there is no log (yet). */
export async function logSize(file: string | null | undefined): Promise<number> {
  if (!file) return 0;
  try {
    return (await stat(file)).size;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const gz = await GzLog.open(gzPathOf(file));
  if (!gz) return 0;
  await gz.close();
  return gz.size;
}

/**
 * What a log takes on disk now (bytes): its plain file's size, else its compressed file's; 0
 * when there is none. Never throws.
 */
export async function logDiskBytes(file: string | null | undefined): Promise<number> {
  if (!file) return 0;
  for (const p of [file, gzPathOf(file)]) {
    const st = await stat(p).catch(() => null);
    if (st) return st.size;
  }
  return 0;
}
