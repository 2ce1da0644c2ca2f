/**
 * Compressed finished logs (lib/logs/gzlog.ts, compress.ts, source.ts; docs/design.md §8
 * "Compressed logs") on real files: for logs of every awkward shape — empty, one byte, exactly
 * one and two segments, a 10 MB line without a newline, binary bytes that are not UTF-8 — the
 * compressed form reads back byte-exact (sha256 against the original) whole, by random ranges,
 * followed from random offsets, through `gzip -d` and Node's gunzip; a damaged file is an error,
 * never other bytes; the swap is invisible to a reader before, during and after it; a log that
 * changes meanwhile is left as it was; a crashed compression's temp is never read and is removed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { compressLog, removeStaleTemps } from '../../lib/logs/compress';
import { CorruptLogError, MAX_SEGMENTS, MIN_SEGMENT_BYTES, segmentBytesFor } from '../../lib/logs/gzlog';
import { LogFollower, readLogRange } from '../../lib/logs/reader';
import { gzPathOf, logDiskBytes, logSize, openLog } from '../../lib/logs/source';

const dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-logs-compress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
let n = 0;

/** Text-like log lines (timestamps, numbers) mixed with base64 ones, `size` bytes exactly. */
function textLog(size: number): Buffer {
  const parts: string[] = [];
  let len = 0;
  for (let i = 0; len < size; i++) {
    const l = i % 3 === 0 ? `${randomBytes(45).toString('base64')}\n` : `2026-12-03T10:00:${String(i % 60).padStart(2, '0')}Z step=${i} loss=${(i % 997) / 331} ünïcødé ✓\n`;
    parts.push(l);
    len += Buffer.byteLength(l);
  }
  return Buffer.from(parts.join('')).subarray(0, size);
}

/** Writes `data` as a plain log and a kept copy; compresses the log (any size). */
async function compressed(data: Buffer): Promise<{ file: string; orig: string }> {
  const d = path.join(dir, `c${n++}`);
  mkdirSync(d);
  const file = path.join(d, 'run.log');
  const orig = path.join(d, 'orig.log');
  writeFileSync(file, data);
  copyFileSync(file, orig);
  const r = await compressLog(file, { minBytes: 0 });
  expect(r).toEqual({ outcome: 'compressed', size: data.length, diskBytes: statSync(gzPathOf(file)).size });
  expect(existsSync(file)).toBe(false);
  return { file, orig };
}

async function readAll(file: string): Promise<Buffer> {
  const src = (await openLog(file, { sequential: true }))!;
  const parts: Buffer[] = [];
  for await (const p of src.stream(await src.size())) parts.push(p as Buffer);
  return Buffer.concat(parts);
}

async function follow(file: string, from: number): Promise<Buffer> {
  const f = new LogFollower(file, from);
  const parts: Buffer[] = [];
  const buf = Buffer.alloc(100_000);
  for (;;) {
    const k = await f.readInto(buf, 0, 1 + Math.floor(Math.random() * buf.length));
    if (k === 0) break;
    parts.push(Buffer.from(buf.subarray(0, k)));
  }
  await f.close();
  return Buffer.concat(parts);
}

const CASES: Array<[string, () => Buffer]> = [
  ['an empty log', () => Buffer.alloc(0)],
  ['one byte', () => Buffer.from('x')],
  ['exactly one segment', () => textLog(MIN_SEGMENT_BYTES)],
  ['one segment and one byte', () => textLog(MIN_SEGMENT_BYTES + 1)],
  ['exactly two segments', () => textLog(2 * MIN_SEGMENT_BYTES)],
  ['3 MB of text and base64 lines', () => textLog(3_000_000)],
  ['a 10 MB line without a newline', () => Buffer.from('0123456789abcdef'.repeat(655_360))],
  ['binary bytes, invalid UTF-8 included', () => Buffer.concat([randomBytes(700_000), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82, 0xf0, 0x9f, 0x98])])],
];

describe('a compressed log reads back byte-exact', () => {
  it.each(CASES)('%s', async (_name, make) => {
    const data = make();
    const { file, orig } = await compressed(data);
    const want = sha(data);
    expect(await logSize(file)).toBe(data.length);
    expect(await logDiskBytes(file)).toBe(statSync(gzPathOf(file)).size);
    // Whole: the reader's stream, a follower from 0, any gzip reader.
    expect(sha(await readAll(file))).toBe(want);
    expect(sha(await follow(file, 0))).toBe(want);
    expect(sha(zlib.gunzipSync(readFileSync(gzPathOf(file))))).toBe(want);
    expect(sha(execFileSync('gzip', ['-dc', gzPathOf(file)], { maxBuffer: 64 << 20 }))).toBe(want);
    // Followed from random offsets (the end included).
    for (const from of [data.length, ...Array.from({ length: 5 }, () => Math.floor(Math.random() * (data.length + 1)))]) {
      expect(sha(await follow(file, from))).toBe(sha(data.subarray(from)));
    }
    // Random raw reads through the one reader, and the REST range reader against the original's.
    const src = (await openLog(file))!;
    expect(src.compressed).toBe(true);
    for (let i = 0; i < 40 && data.length > 0; i++) {
      const off = Math.floor(Math.random() * data.length);
      const len = 1 + Math.floor(Math.random() * 600_000);
      const buf = Buffer.alloc(len);
      let got = 0;
      for (let k; got < len && (k = await src.read(buf, got, len - got, off + got)) > 0; ) got += k;
      expect(sha(buf.subarray(0, got))).toBe(sha(data.subarray(off, off + len)));
      const limit = 1 + Math.floor(Math.random() * 1_048_576);
      const a = await readLogRange(file, off, limit, { complete: true });
      const b = await readLogRange(orig, off, limit, { complete: true });
      expect({ ...a, data: sha(a.data) }).toEqual({ ...b, data: sha(b.data) });
    }
    await src.close();
  });
});

describe('the format', () => {
  it('grows its segments so that the index fits the gzip header', () => {
    expect(segmentBytesFor(0)).toBe(MIN_SEGMENT_BYTES);
    expect(segmentBytesFor(MAX_SEGMENTS * MIN_SEGMENT_BYTES)).toBe(MIN_SEGMENT_BYTES);
    expect(segmentBytesFor(MAX_SEGMENTS * MIN_SEGMENT_BYTES + 1)).toBe(2 * MIN_SEGMENT_BYTES);
    expect(segmentBytesFor(1e12)).toBeGreaterThanOrEqual(1e12 / MAX_SEGMENTS);
  });

  it('answers a damaged segment with an error, never with other bytes', async () => {
    const data = textLog(1_000_000);
    const { file } = await compressed(data);
    const gz = readFileSync(gzPathOf(file));
    const bad = Buffer.from(gz);
    bad[Math.floor(gz.length * 0.6)] ^= 0x55;
    writeFileSync(gzPathOf(file), bad);
    const src = (await openLog(file))!;
    const buf = Buffer.alloc(data.length);
    await expect(async () => {
      for (let pos = 0, k; pos < data.length && (k = await src.read(buf, pos, data.length - pos, pos)) > 0; ) pos += k;
    }).rejects.toThrow(CorruptLogError);
    await src.close();
    writeFileSync(gzPathOf(file), gz.subarray(0, gz.length - 5));
    await expect(openLog(file)).rejects.toThrow(/the index accounts for/);
    writeFileSync(gzPathOf(file), zlib.gzipSync(data));
    await expect(openLog(file)).rejects.toThrow(/not a jobdeck compressed log/);
  });
});

describe('the swap', () => {
  const plain = (data: Buffer) => {
    const d = path.join(dir, `s${n++}`);
    mkdirSync(d);
    const file = path.join(d, 'run.log');
    writeFileSync(file, data);
    return file;
  };

  it('keeps a reader byte-exact whether it opened the log before, during or after it', async () => {
    const data = textLog(4_000_000);
    const file = plain(data);
    // Opened (and half read) before: it keeps the plain file after the unlink.
    const early = new LogFollower(file, 0);
    const buf = Buffer.alloc(data.length);
    let got = 0;
    const chunk = () => Math.min(65_536, buf.length - got);
    while (got < data.length / 2) got += await early.readInto(buf, got, chunk());
    let between: Buffer | null = null;
    const r = await compressLog(file, {
      // Opened between the rename and the unlink: both files exist, the plain one is read.
      beforeUnlink: async () => {
        const s = (await openLog(file))!;
        expect(s.compressed).toBe(false);
        await s.close();
        between = await follow(file, 0);
      },
    });
    expect(r.outcome).toBe('compressed');
    expect(existsSync(file)).toBe(false);
    for (let k; got < buf.length && (k = await early.readInto(buf, got, chunk())) > 0; ) got += k;
    expect(await early.readInto(Buffer.alloc(10), 0, 10)).toBe(0);
    await early.close();
    expect(sha(buf.subarray(0, got))).toBe(sha(data));
    expect(sha(between!)).toBe(sha(data));
    // Opened after: the compressed one.
    expect(sha(await follow(file, 0))).toBe(sha(data));
    expect(readdirSync(path.dirname(file)).sort()).toEqual(['run.log.gz']);
  });

  it('leaves a log that changed while it was compressed as it was, and small logs plain', async () => {
    const data = textLog(500_000);
    const file = plain(data);
    const r = await compressLog(file, { beforeSwap: () => appendFileSync(file, 'late line\n') });
    expect(r).toEqual({ outcome: 'changed' });
    expect(readdirSync(path.dirname(file))).toEqual(['run.log']);
    expect(sha(readFileSync(file))).toBe(sha(Buffer.concat([data, Buffer.from('late line\n')])));
    const small = plain(Buffer.from('hello\n'));
    expect(await compressLog(small)).toEqual({ outcome: 'small', size: 6 });
    expect(await compressLog(path.join(dir, 'none', 'run.log'))).toEqual({ outcome: 'missing' });
  });

  it('removes its temp when aborted', async () => {
    const data = textLog(3_000_000);
    const file = plain(data);
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(compressLog(file, { signal: ac.signal })).rejects.toThrow('stop');
    expect(readdirSync(path.dirname(file))).toEqual(['run.log']);
  });

  it('never reads a crashed compression’s temp, and removes it once its process is gone or it is old', async () => {
    const data = textLog(2_000_000);
    const file = plain(data);
    // What a compression killed half-way leaves: part of a compressed file under a temp name.
    const ref = await compressed(data);
    const partial = readFileSync(gzPathOf(ref.file)).subarray(0, 100_000);
    const host = os.hostname().replace(/[^A-Za-z0-9]+/g, '_').slice(0, 64);
    const child = spawn('sleep', ['30']);
    const dead = spawn('true');
    await new Promise((r) => dead.once('exit', r));
    const temps = {
      dead: `run.log.gz.tmp-${host}-${dead.pid}-0badf00d`,
      live: `run.log.gz.tmp-${host}-${child.pid}-0badf00d`,
      old: `run.log.gz.tmp-otherhost-12345-0badf00d`,
      young: `run.log.gz.tmp-otherhost-12346-0badf00d`,
    };
    for (const t of Object.values(temps)) writeFileSync(path.join(path.dirname(file), t), partial);
    const hourAgo = (Date.now() - 3_700_000) / 1000;
    utimesSync(path.join(path.dirname(file), temps.old), hourAgo, hourAgo);
    expect(sha(await readAll(file))).toBe(sha(data));
    expect(await removeStaleTemps(path.dirname(file))).toBe(2 * partial.length);
    child.kill();
    expect(readdirSync(path.dirname(file)).sort()).toEqual(['run.log', temps.live, temps.young].sort());
    // A compression beside the others' temps still swaps in its own, complete file.
    expect((await compressLog(file)).outcome).toBe('compressed');
    expect(sha(await readAll(file))).toBe(sha(data));
  });
});
