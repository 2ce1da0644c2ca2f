import { open, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

/**
 * The compressed form of a finished log (docs/design.md §8 "Compressed logs"): ONE gzip member,
 * so every gzip reader (browsers with `Content-Encoding: gzip`, `gzip -d`, `rg -z`) gets the log
 * whole, whose deflate stream is cut by full flushes every `segmentBytes` of log — each segment
 * is compressed on its own (no back-reference crosses a cut), so a read at any offset inflates
 * only the segment that holds it. The seek index sits in the gzip header's extra field (RFC 1952
 * FEXTRA, subfield `JD`), which every gzip reader skips:
 *
 *   0  1f 8b 08 04 | mtime 0 (4) | xfl 0 | os 3       gzip header with FEXTRA
 *  10  XLEN (u16)                                      = 20 + 8 × count
 *  12  'J' 'D' | LEN (u16)                             = XLEN − 4
 *  16  version 1 (u8) | log2(segmentBytes) (u8) | 0 (u16)
 *  20  log size, uncompressed (u64)
 *  28  count (u32)                                     = ceil(size / segmentBytes)
 *  32  count × { compressed length (u32), CRC-32 of the segment's log bytes (u32) }
 *   …  the segments' deflate data, each ending on a full flush (byte-aligned, fresh dictionary)
 *   …  03 00 (an empty final block) | CRC-32 of the log (u32) | size mod 2^32 (u32)
 *
 * All integers little-endian. XLEN ≤ 65535 bounds the count (MAX_SEGMENTS), so a log too large
 * for 8,189 segments of the minimum size gets larger segments (a power of two). A segment read
 * is checked against its CRC and length: a damaged file is an error, never other bytes.
 */

/** Smallest segment (bytes of log between two cuts). */
export const MIN_SEGMENT_BYTES = 256 * 1024;
/** Most segments the header's index holds (XLEN ≤ 65535). */
export const MAX_SEGMENTS = Math.floor((65_535 - 20) / 8);
/** zlib level of the segments (gzip's default: ~40 MB/s of text on one core here). */
const LEVEL = 6;
const FIXED = 32;
/** Segments a sequential reader inflates ahead of the one it reads. */
const READ_AHEAD = 2;
const TRAILER = 10;
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

const deflateRaw = promisify(zlib.deflateRaw) as (buf: Buffer, opts: zlib.ZlibOptions) => Promise<Buffer>;
const inflateRaw = promisify(zlib.inflateRaw) as (buf: Buffer, opts: zlib.ZlibOptions) => Promise<Buffer>;

/** Thrown when a compressed log is not in this format or its bytes do not check out. */
export class CorruptLogError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`compressed log ${file}: ${detail}`);
    this.name = 'CorruptLogError';
  }
}

/** The segment size for a log of `size` bytes: the minimum, doubled until the index holds it. */
export function segmentBytesFor(size: number): number {
  let s = MIN_SEGMENT_BYTES;
  while (Math.ceil(size / s) > MAX_SEGMENTS) s *= 2;
  return s;
}

/** A parsed header: where each segment's compressed bytes are, and their checks. */
export interface GzLogIndex {
  /** Log size (uncompressed bytes). */
  size: number;
  segmentBytes: number;
  /** Byte offset in the file of segment k's deflate data (count + 1 entries: the last is the final block). */
  offsets: number[];
  crcs: number[];
  /** The file's size on disk (bytes). */
  diskBytes: number;
}

function headerBytes(count: number): number {
  return FIXED + 8 * count;
}

function encodeHeader(size: number, segmentBytes: number, lens: readonly number[], crcs: readonly number[]): Buffer {
  const count = lens.length;
  const h = Buffer.alloc(headerBytes(count));
  h.set([0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0x03], 0);
  h.writeUInt16LE(20 + 8 * count, 10);
  h.set([0x4a, 0x44], 12);
  h.writeUInt16LE(16 + 8 * count, 14);
  h.writeUInt8(1, 16);
  h.writeUInt8(Math.log2(segmentBytes), 17);
  h.writeBigUInt64LE(BigInt(size), 20);
  h.writeUInt32LE(count, 28);
  for (let k = 0; k < count; k++) {
    h.writeUInt32LE(lens[k], FIXED + 8 * k);
    h.writeUInt32LE(crcs[k], FIXED + 8 * k + 4);
  }
  return h;
}

async function readFully(fh: FileHandle, buf: Buffer, pos: number): Promise<number> {
  let got = 0;
  while (got < buf.length) {
    const { bytesRead } = await fh.read(buf, got, buf.length - got, pos + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

/**
 * Reads and checks the header of an open compressed log.
 * @throws CorruptLogError when it is not this format or does not fit the file's size.
 */
export async function readGzLogIndex(fh: FileHandle, file: string): Promise<GzLogIndex> {
  const diskBytes = (await fh.stat()).size;
  const fixed = Buffer.alloc(FIXED);
  if ((await readFully(fh, fixed, 0)) < FIXED) throw new CorruptLogError(file, `${diskBytes} bytes is too short for its header`);
  const bad = (what: string) => new CorruptLogError(file, `${what} (not a jobdeck compressed log)`);
  if (fixed[0] !== 0x1f || fixed[1] !== 0x8b || fixed[2] !== 0x08 || fixed[3] !== 0x04) throw bad('no gzip header with an extra field');
  if (fixed[12] !== 0x4a || fixed[13] !== 0x44 || fixed[16] !== 1) throw bad('no version 1 index subfield');
  const count = fixed.readUInt32LE(28);
  const shift = fixed[17];
  const size = Number(fixed.readBigUInt64LE(20));
  if (fixed.readUInt16LE(10) !== 20 + 8 * count || fixed.readUInt16LE(14) !== 16 + 8 * count) throw bad('index length does not match its count');
  if (shift > 40 || !Number.isSafeInteger(size) || count !== Math.ceil(size / 2 ** shift)) throw bad(`count ${count} does not cover ${size} bytes`);
  const table = Buffer.alloc(8 * count);
  if ((await readFully(fh, table, FIXED)) < table.length) throw new CorruptLogError(file, 'truncated index');
  const offsets = [headerBytes(count)];
  const crcs: number[] = [];
  for (let k = 0; k < count; k++) {
    offsets.push(offsets[k] + table.readUInt32LE(8 * k));
    crcs.push(table.readUInt32LE(8 * k + 4));
  }
  if (offsets[count] + TRAILER !== diskBytes) throw new CorruptLogError(file, `the index accounts for ${offsets[count] + TRAILER} bytes, the file has ${diskBytes}`);
  return { size, segmentBytes: 2 ** shift, offsets, crcs, diskBytes };
}

/** What compressing one log wrote. */
export interface GzWriteResult {
  /** Log bytes read (uncompressed). */
  size: number;
  /** Bytes written (the compressed file's size). */
  diskBytes: number;
  segments: number;
  segmentBytes: number;
}

/**
 * Compresses the first `size` bytes of `src` into `dest` (both open; `dest` empty) in this format.
 * Reading, deflating (zlib's thread pool) and writing overlap by one segment; memory is about two
 * segments. `signal` is checked between segments.
 * @throws Error when `src` has fewer than `size` bytes; the signal's reason when aborted.
 */
export async function writeGzLog(src: FileHandle, dest: FileHandle, size: number, signal?: AbortSignal): Promise<GzWriteResult> {
  const segmentBytes = segmentBytesFor(size);
  const count = Math.ceil(size / segmentBytes);
  const lens: number[] = [];
  const crcs: number[] = [];
  let crc = 0;
  const segment = async (k: number) => {
    const want = Math.min(segmentBytes, size - k * segmentBytes);
    const buf = Buffer.allocUnsafe(want);
    if ((await readFully(src, buf, k * segmentBytes)) < want) throw new Error(`log shrank while being compressed (segment ${k} short)`);
    const c = zlib.crc32(buf);
    return { buf, crc: c, data: await deflateRaw(buf, { level: LEVEL, finishFlush: zlib.constants.Z_FULL_FLUSH }) };
  };
  let pos = headerBytes(count);
  // The header's index is written last, once the lengths are known (the file is not visible yet).
  await dest.write(Buffer.alloc(pos), 0, pos, 0);
  let next = count > 0 ? segment(0) : null;
  for (let k = 0; k < count; k++) {
    signal?.throwIfAborted();
    const cur = await next!;
    next = k + 1 < count ? segment(k + 1) : null;
    // The next segment's work is running: its failure after an abort here must not go unhandled.
    next?.catch(() => undefined);
    crc = zlib.crc32(cur.buf, crc);
    await dest.write(cur.data, 0, cur.data.length, pos);
    pos += cur.data.length;
    lens.push(cur.data.length);
    crcs.push(cur.crc);
  }
  const trailer = Buffer.alloc(TRAILER);
  FINAL_BLOCK.copy(trailer, 0);
  trailer.writeUInt32LE(crc >>> 0, 2);
  trailer.writeUInt32LE(size % 2 ** 32, 6);
  await dest.write(trailer, 0, TRAILER, pos);
  const header = encodeHeader(size, segmentBytes, lens, crcs);
  await dest.write(header, 0, header.length, 0);
  return { size, diskBytes: pos + TRAILER, segments: count, segmentBytes };
}

/**
 * Random access to an open compressed log: read(buf, at, len, pos) inflates the segment that
 * holds `pos` (kept for the next read); `sequential` (a reader going front to back) also starts
 * inflating the READ_AHEAD segments after it, so zlib's threads inflate them while the reader
 * sends the current one. Memory: one segment, 1 + READ_AHEAD when sequential. Holds the file
 * open until close().
 */
export class GzLog {
  private readonly cache = new Map<number, Promise<Buffer>>();

  private constructor(
    private readonly fh: FileHandle,
    readonly file: string,
    readonly index: GzLogIndex,
    private readonly sequential: boolean,
  ) {}

  /**
   * Opens and checks a compressed log. @returns null when `file` does not exist.
   * @throws CorruptLogError for a file not in this format.
   */
  static async open(file: string, opts: { sequential?: boolean } = {}): Promise<GzLog | null> {
    let fh: FileHandle;
    try {
      fh = await open(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw err;
    }
    try {
      return new GzLog(fh, file, await readGzLogIndex(fh, file), opts.sequential ?? false);
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw err;
    }
  }

  /** The log's size (uncompressed bytes). */
  get size(): number {
    return this.index.size;
  }

  /** The open file (for sending it as it is: Content-Encoding gzip). */
  get handle(): FileHandle {
    return this.fh;
  }

  /**
   * Copies up to `len` log bytes from position `pos` into `buf` at `at`.
   * @returns the bytes copied (0 at or past the end).
   * @throws CorruptLogError when a segment does not inflate to its length and CRC.
   */
  async read(buf: Uint8Array, at: number, len: number, pos: number): Promise<number> {
    const { size, segmentBytes, crcs } = this.index;
    if (pos >= size || len <= 0) return 0;
    const k = Math.floor(pos / segmentBytes);
    const ahead = this.sequential ? Math.min(READ_AHEAD, crcs.length - 1 - k) : 0;
    for (const key of [...this.cache.keys()]) if (key < k || key > k + ahead) this.cache.delete(key);
    const cur = this.segment(k);
    for (let j = 1; j <= ahead; j++) void this.segment(k + j).catch(() => undefined);
    const seg = await cur;
    const from = pos - k * segmentBytes;
    const n = Math.min(len, seg.length - from);
    seg.copy(buf, at, from, from + n);
    return n;
  }

  /** Segment k inflated, from the cache or started now (and cached). */
  private segment(k: number): Promise<Buffer> {
    let p = this.cache.get(k);
    if (!p) {
      const q = this.inflate(k);
      q.catch(() => {
        if (this.cache.get(k) === q) this.cache.delete(k);
      });
      this.cache.set(k, (p = q));
    }
    return p;
  }

  private async inflate(k: number): Promise<Buffer> {
    const { offsets, crcs, size, segmentBytes } = this.index;
    const comp = Buffer.allocUnsafe(offsets[k + 1] - offsets[k]);
    if ((await readFully(this.fh, comp, offsets[k])) < comp.length) throw new CorruptLogError(this.file, `segment ${k} is truncated`);
    const want = Math.min(segmentBytes, size - k * segmentBytes);
    let out: Buffer;
    try {
      out = await inflateRaw(comp, { finishFlush: zlib.constants.Z_SYNC_FLUSH, chunkSize: Math.max(64 * 1024, want) });
    } catch (err) {
      throw new CorruptLogError(this.file, `segment ${k} does not inflate: ${(err as Error).message}`);
    }
    if (out.length !== want || zlib.crc32(out) !== crcs[k]) throw new CorruptLogError(this.file, `segment ${k} inflates to ${out.length} bytes that do not match its index (${want} bytes, CRC ${crcs[k]})`);
    return out;
  }

  /** Releases the file and the inflated segments. */
  async close(): Promise<void> {
    this.cache.clear();
    await this.fh.close().catch(() => undefined);
  }
}
