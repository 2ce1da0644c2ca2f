import { randomBytes } from 'node:crypto';
import { open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pidExists } from '../proc';
import { writeGzLog } from './gzlog';
import { gzPathOf } from './source';

/**
 * Replacing a finished log by its compressed form (docs/design.md §8 "Compressed logs"), crash-
 * safe and invisible to readers:
 *
 *   1. `run.log.gz.tmp-<host>-<pid>-<random>` is written from the plain file (lib/logs/gzlog.ts)
 *      and fsynced — a name no reader opens;
 *   2. the plain file is checked unchanged (size, mtime) since it was opened — else the temp goes
 *      and nothing changes (a writer was still there: try again later);
 *   3. renamed to `run.log.gz` (atomic), the folder fsynced;
 *   4. the plain file unlinked, the folder fsynced.
 *
 * openLog() (lib/logs/source.ts) opens the plain file first, so a reader sees the plain file up
 * to step 4 and the compressed one after it, both complete; one that opened the plain file
 * keeps reading it after the unlink. A crash leaves at most a temp (never read; removed by the
 * next compression of that folder once its process is gone, by the retention system with the
 * job's logs, or with the job's folder) or, between 3 and 4, both files (the plain one is read;
 * the next compression redoes 1–4). Two servers compressing the same log write two temps and
 * rename the same bytes in turn: harmless.
 */

/** Logs smaller than this stay plain: they fill one file-system block either way. */
export const MIN_COMPRESS_BYTES = 4096;

/** A temp older than this is taken for a crashed compression's, whoever wrote it (ms). */
const STALE_TEMP_MS = 3_600_000;

const HOST = os.hostname().replace(/[^A-Za-z0-9]+/g, '_').slice(0, 64) || 'host';
const TEMP = /^(.+)\.gz\.tmp-([A-Za-z0-9_]+)-([0-9]+)-[0-9a-f]+$/;

/** True for a compression's temp file name (`run.log.gz.tmp-…`). */
export function isCompressTemp(name: string): boolean {
  return TEMP.test(name);
}

/** What compressLog did. */
export type CompressOutcome =
  /** Compressed: the plain file is gone, `run.log.gz` holds it. */
  | { outcome: 'compressed'; size: number; diskBytes: number }
  /** No plain file (never written, compressed already, or removed): nothing to do. */
  | { outcome: 'missing' }
  /** Smaller than MIN_COMPRESS_BYTES: left plain. */
  | { outcome: 'small'; size: number }
  /** The plain file changed while it was compressed: left as it was, try again later. */
  | { outcome: 'changed' };

/** Options of compressLog. */
export interface CompressOptions {
  signal?: AbortSignal;
  /** Logs smaller than this stay plain (default MIN_COMPRESS_BYTES; tests compress empty ones). */
  minBytes?: number;
  /** Test seam: runs once the temp is written, before the plain file is checked unchanged (step 2). */
  beforeSwap?: () => void | Promise<void>;
  /** Test seam: runs after the rename (step 3), before the plain file is unlinked (step 4). */
  beforeUnlink?: () => void | Promise<void>;
}

async function syncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

/**
 * Compresses one finished log in place (see the module comment). The caller makes sure nothing
 * writes it any more (the attempt ended and its leftovers were stopped).
 * @throws the file system's errors (the temp is removed first); the signal's reason when aborted.
 */
export async function compressLog(file: string, opts: CompressOptions = {}): Promise<CompressOutcome> {
  let src: FileHandle;
  try {
    src = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { outcome: 'missing' };
    throw err;
  }
  const tmp = `${gzPathOf(file)}.tmp-${HOST}-${process.pid}-${randomBytes(4).toString('hex')}`;
  let written = false;
  try {
    const before = await src.stat();
    if (before.size < (opts.minBytes ?? MIN_COMPRESS_BYTES)) return { outcome: 'small', size: before.size };
    const dest = await open(tmp, 'wx', 0o600);
    written = true;
    let r;
    try {
      r = await writeGzLog(src, dest, before.size, opts.signal);
      await dest.sync();
    } finally {
      await dest.close();
    }
    await opts.beforeSwap?.();
    const after = await src.stat();
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) return { outcome: 'changed' };
    const dir = path.dirname(file);
    await rename(tmp, gzPathOf(file));
    written = false;
    await syncDir(dir);
    await opts.beforeUnlink?.();
    await unlink(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await syncDir(dir);
    return { outcome: 'compressed', size: r.size, diskBytes: r.diskBytes };
  } finally {
    await src.close().catch(() => undefined);
    if (written) await unlink(tmp).catch(() => undefined);
  }
}

/**
 * Removes the temps of compressions that cannot finish any more from `dir`: written on this
 * host by a process that is gone, or (any host) older than an hour. A live compression's temp
 * stays. @returns the bytes removed. Never throws.
 */
export async function removeStaleTemps(dir: string, now = Date.now()): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = TEMP.exec(name);
    if (!m) continue;
    const p = path.join(dir, name);
    const st = await stat(p).catch(() => null);
    if (!st) continue;
    const gone = (m[2] === HOST && Number(m[3]) !== process.pid && !pidExists(Number(m[3]))) || now - st.mtimeMs > STALE_TEMP_MS;
    if (gone && (await unlink(p).then(() => true, () => false))) bytes += st.size;
  }
  return bytes;
}
