/**
 * Measure "compress" — compressed finished logs (lib/logs/gzlog.ts, compress.ts, source.ts;
 * docs/design.md §8 "Compressed logs"). In-process, no server: 200 MB of log text (50 MB with
 * --quick) — training-style text lines with numbers and timestamps, one in three a base64 line —
 * written twice under a temp folder; one copy is compressed the way the monitor's compressor does
 * it (compressLog: temp, fsync, rename, unlink), the other stays plain. Same run, page cache warm:
 *
 * - compression: time, MB/s of log, ratio (bytes on disk ÷ log bytes);
 * - byte-exact: sha256 of a full replay, of 200 random ranges and of follows from 5 random
 *   offsets of the compressed log against the plain one's;
 * - full replay through LogFollower in 256 KiB reads (what the job stream's pump does), one
 *   reader, then 10 at once: MB/s compressed and plain (median of 3 for one reader);
 * - the inflated download stream (what GET …/logs/download sends a client without gzip);
 * - range reads as GET /api/jobs/:id/logs does them (readLogRange: open, 256 KiB, close) at 200
 *   random offsets: p50/p95 compressed and plain;
 * - this process's RSS peak over its RSS before, during the compression and during the replays
 *   (sampled every 20 ms).
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { compressLog } from '../lib/logs/compress';
import { LogFollower, readLogRange } from '../lib/logs/reader';
import { gzPathOf, openLog } from '../lib/logs/source';
import type { Measure, MeasureResult, Row } from './lib/context';
import { tempDir } from './lib/cleanup';
import { dist, fmtMs, nowMs, round } from './lib/util';

const READ = 256 * 1024;
const RANGES = 200;
const CONCURRENT = 10;

/** `total` bytes of log text, written to both files in 1 MB blocks (deterministic: a seeded generator). */
function writeLogs(files: string[], total: number): void {
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const fds = files.map((f) => openSync(f, 'w'));
  let step = 0;
  for (let left = total; left > 0; ) {
    const lines: string[] = [];
    let len = 0;
    while (len < 1_000_000) {
      step++;
      const l =
        step % 3 === 0
          ? `${Array.from({ length: 76 }, () => b64[Math.floor(rnd() * 64)]).join('')}\n`
          : `2026-12-03T${String(10 + (step % 12)).padStart(2, '0')}:${String(step % 60).padStart(2, '0')}:${String((step * 7) % 60).padStart(2, '0')}.${String(step % 1000).padStart(3, '0')}Z INFO trainer epoch=${Math.floor(step / 50_000)} step=${step} loss=${(rnd() * 3).toFixed(4)} lr=3.0e-4 grad_norm=${(rnd() * 10).toFixed(3)} tokens/s=${(12_000 + rnd() * 500).toFixed(1)}\n`;
      lines.push(l);
      len += l.length;
    }
    const block = Buffer.from(lines.join('')).subarray(0, Math.min(left, 1_000_000));
    for (const fd of fds) writeSync(fd, block);
    left -= block.length;
  }
  for (const fd of fds) closeSync(fd);
}

/** Reads the whole log through a LogFollower from `from` in 256 KiB reads. @returns the bytes read (and their sha256 when `hash`). */
async function replay(file: string, from = 0, hash = false): Promise<{ bytes: number; sha: string | null }> {
  const f = new LogFollower(file, from);
  const buf = Buffer.allocUnsafe(READ);
  const h = hash ? createHash('sha256') : null;
  let bytes = 0;
  for (let k; (k = await f.readInto(buf, 0, READ)) > 0; ) {
    bytes += k;
    h?.update(buf.subarray(0, k));
  }
  await f.close();
  return { bytes, sha: h?.digest('hex') ?? null };
}

async function streamed(file: string): Promise<number> {
  const src = (await openLog(file, { sequential: true }))!;
  let bytes = 0;
  for await (const p of src.stream(await src.size())) bytes += (p as Buffer).length;
  return bytes;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export const compress: Measure = {
  name: 'compress',
  title: 'Compressed finished logs',
  async run(ctx): Promise<MeasureResult> {
    const total = ctx.quick ? 50_000_000 : 200_000_000;
    const dir = tempDir('compress');
    const plain = path.join(dir, 'plain', 'run.log');
    const gz = path.join(dir, 'gz', 'run.log');
    for (const f of [plain, gz]) mkdirSync(path.dirname(f), { recursive: true });
    const tw = nowMs();
    writeLogs([plain, gz], total);
    ctx.log(`compress: 2 × ${(total / 1e6).toFixed(0)} MB written in ${fmtMs(nowMs() - tw)}; compressing…`);
    await replay(gz);
    let rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const t0 = nowMs();
    const r = await compressLog(gz);
    const compressMs = nowMs() - t0;
    const compressRss = { before: rss0, peak };
    if (r.outcome !== 'compressed') throw new Error(`compress: expected the log compressed, got ${r.outcome}`);
    const disk = statSync(gzPathOf(gz)).size;
    const mbps = (bytes: number, ms: number) => (bytes / 1e6) / (ms / 1000);

    // Byte-exact: the compressed log's every read against the plain one's.
    const exact: string[] = [];
    const [a, b] = [await replay(gz, 0, true), await replay(plain, 0, true)];
    if (a.sha !== b.sha || a.bytes !== total) exact.push(`full replay: ${a.bytes} bytes ${a.sha} vs ${b.sha}`);
    for (let i = 0; i < 5; i++) {
      const from = Math.floor(Math.random() * total);
      const [x, y] = [await replay(gz, from, true), await replay(plain, from, true)];
      if (x.sha !== y.sha) exact.push(`follow from ${from}`);
    }
    const offsets = Array.from({ length: RANGES }, () => Math.floor(Math.random() * total));
    for (const off of offsets) {
      const [x, y] = [await readLogRange(gz, off, READ, { complete: true }), await readLogRange(plain, off, READ, { complete: true })];
      if (x.nextOffset !== y.nextOffset || !x.data.equals(y.data)) exact.push(`range at ${off}`);
    }

    // Replay and download throughput, page cache warm for both (the reads above).
    rss0 = process.memoryUsage().rss;
    peak = rss0;
    const one = { gz: [] as number[], plain: [] as number[] };
    for (let i = 0; i < 3; i++) {
      for (const [k, f] of [['gz', gz], ['plain', plain]] as const) {
        const s = nowMs();
        await replay(f);
        one[k].push(nowMs() - s);
      }
    }
    const many: Record<'gz' | 'plain', number> = { gz: 0, plain: 0 };
    for (const [k, f] of [['gz', gz], ['plain', plain]] as const) {
      const s = nowMs();
      await Promise.all(Array.from({ length: CONCURRENT }, () => replay(f)));
      many[k] = nowMs() - s;
    }
    const dl: Record<'gz' | 'plain', number> = { gz: 0, plain: 0 };
    for (const [k, f] of [['gz', gz], ['plain', plain]] as const) {
      const s = nowMs();
      if ((await streamed(f)) !== total) exact.push(`download stream of ${k}`);
      dl[k] = nowMs() - s;
    }
    const replayRss = { before: rss0, peak };

    // Range reads as the REST route does them: open, read 256 KiB, close.
    const lat = { gz: [] as number[], plain: [] as number[] };
    for (const off of offsets) {
      for (const [k, f] of [['gz', gz], ['plain', plain]] as const) {
        const s = nowMs();
        await readLogRange(f, off, READ, { complete: true });
        lat[k].push(nowMs() - s);
      }
    }
    clearInterval(sampler);
    const dg = dist(lat.gz);
    const dp = dist(lat.plain);
    const [g1, p1] = [median(one.gz), median(one.plain)];
    const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
    const rows: Row[] = [
      { metric: `${(total / 1e6).toFixed(0)} MB log: compression (one log, as the monitor does it)`, value: `${fmtMs(compressMs)} (${mbps(total, compressMs).toFixed(1)} MB/s); ${mb(disk)} on disk, ratio ${(disk / total).toFixed(3)}` },
      { metric: 'byte-exact against the plain log (sha256: full replay, 5 follows, 200 ranges, download stream)', value: exact.length ? exact.slice(0, 3).join('; ') : 'all equal', pass: exact.length === 0 },
      { metric: 'full replay, 1 reader (LogFollower, 256 KiB reads): compressed / plain', value: `${mbps(total, g1).toFixed(0)} / ${mbps(total, p1).toFixed(0)} MB/s (${(p1 / g1).toFixed(2)}×)` },
      { metric: `full replay, ${CONCURRENT} readers at once: compressed / plain (all bytes ÷ time)`, value: `${mbps(CONCURRENT * total, many.gz).toFixed(0)} / ${mbps(CONCURRENT * total, many.plain).toFixed(0)} MB/s` },
      { metric: 'download stream without gzip (inflated) / plain', value: `${mbps(total, dl.gz).toFixed(0)} / ${mbps(total, dl.plain).toFixed(0)} MB/s` },
      { metric: `range read (open, 256 KiB, close) at ${RANGES} random offsets: p50 (p95) compressed / plain`, value: `${fmtMs(dg.p50)} (${fmtMs(dg.p95)}) / ${fmtMs(dp.p50)} (${fmtMs(dp.p95)})` },
      { metric: 'this process: RSS peak over before, compressing / replaying', value: `+${mb(compressRss.peak - compressRss.before)} / +${mb(replayRss.peak - replayRss.before)} (before ${mb(compressRss.before)})` },
    ];
    return {
      rows,
      data: { totalBytes: total, diskBytes: disk, compressMs: round(compressMs), replayMs: one, concurrentMs: many, downloadMs: dl, range: { gz: dg, plain: dp }, compressRss, replayRss, mismatches: exact },
      notes: total < 200_000_000 ? [`${(total / 1e6).toFixed(0)} MB (--quick); the full size is 200 MB`] : [],
    };
  },
};
