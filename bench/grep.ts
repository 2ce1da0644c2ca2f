/**
 * Measure "grep" — search across logs. `--grep-bytes` of logs (default 200 MB; 50 MB with
 * --quick; the 2 GB: `--grep-bytes=2000000000`) in 1,000 files of 100-byte lines under a
 * temp folder, written before timing (page cache warm: a first untimed `rg` pass reads them).
 * A literal needle sits on 10 lines, in 10 files spread over the set. Timed in this process
 * through lib/logs/grep.ts grepLogs — the engine GET /api/logs/grep drives — with ripgrep: time
 * to the first match, to the end of the whole scan (no result limit reached), and the scan rate;
 * against `rg -F -c` alone over the same files in the same run (median of 3 each). For
 * information, the Node scan (the fallback without rg) over the same files. Memory: this
 * process's RSS peak during the searches (sampled every 20 ms) over its RSS before.
 */
import { spawnSync } from 'node:child_process';
import { openSync, writeSync, closeSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { grepLogs, hasRipgrep } from '../lib/logs/grep';
import type { Measure, MeasureResult, Row } from './lib/context';
import { tempDir } from './lib/cleanup';
import { fmtMs, nowMs, round } from './lib/util';

const FILES = 1000;
const NEEDLE = 'NEEDLE-7f3a: disk quota exceeded';

function writeLogs(dir: string, totalBytes: number): string[] {
  const per = Math.floor(totalBytes / FILES);
  const line = (i: number) => `${String(i).padStart(9, '0')} step=${i % 997} loss=0.${(i * 7919) % 100000} lr=3e-4 throughput=1234.5 tokens/s ok\n`.padEnd(100, '.').slice(0, 99) + '\n';
  const block = Buffer.from(Array.from({ length: 10_000 }, (_, i) => line(i)).join(''));
  const files: string[] = [];
  for (let f = 0; f < FILES; f++) {
    const p = path.join(dir, `job-${f}`, 'run.log');
    mkdirSync(path.dirname(p), { recursive: true });
    const fd = openSync(p, 'w');
    let left = per;
    const needleAt = f % 100 === 50 ? Math.floor(per / 2) : -1;
    let written = 0;
    while (left > 0) {
      const n = Math.min(left, block.length);
      if (needleAt >= written && needleAt < written + n) {
        writeSync(fd, block, 0, n - 100);
        writeSync(fd, Buffer.from(`${NEEDLE}\n`.padStart(100, ' ')));
      } else writeSync(fd, block, 0, n);
      written += n;
      left -= n;
    }
    closeSync(fd);
    files.push(p);
  }
  return files;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(files: string[], engine: 'rg' | 'node') {
  let first = -1;
  const t0 = nowMs();
  const s = await grepLogs(files.map((p) => ({ path: p, key: p })), { pattern: NEEDLE, maxResults: 1000, maxMs: 600_000, engine }, () => {
    if (first < 0) first = nowMs() - t0;
  });
  return { firstMs: first, totalMs: nowMs() - t0, matches: s.matches };
}

export const grep: Measure = {
  name: 'grep',
  title: 'Search across logs',
  async run(ctx): Promise<MeasureResult> {
    if (!hasRipgrep()) throw new Error('grep: rg is not installed (bash scripts/ensure-services.sh installs Debian ripgrep)');
    const total = ctx.grepBytes ?? (ctx.quick ? 50_000_000 : 200_000_000);
    const dir = tempDir('grep');
    const t0 = nowMs();
    const files = writeLogs(dir, total);
    ctx.log(`grep: ${files.length} files, ${(total / 1e6).toFixed(0)} MB written in ${fmtMs(nowMs() - t0)}; timing…`);
    spawnSync('rg', ['-F', '-c', '--no-config', NEEDLE, '--', ...files.slice(0, 500)], { stdio: 'ignore' });
    spawnSync('rg', ['-F', '-c', '--no-config', NEEDLE, '--', ...files.slice(500)], { stdio: 'ignore' });
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const runs = [];
    const alone: number[] = [];
    for (let i = 0; i < 3; i++) {
      runs.push(await timed(files, 'rg'));
      const a0 = nowMs();
      spawnSync('rg', ['-F', '-c', '--no-config', NEEDLE, '--', ...files.slice(0, 500)], { stdio: 'ignore' });
      spawnSync('rg', ['-F', '-c', '--no-config', NEEDLE, '--', ...files.slice(500)], { stdio: 'ignore' });
      alone.push(nowMs() - a0);
    }
    const node = await timed(files, 'node');
    clearInterval(sampler);
    const first = median(runs.map((r) => r.firstMs));
    const whole = median(runs.map((r) => r.totalMs));
    const rgAlone = median(alone);
    const rate = (ms: number) => `${((total / 1e9) / (ms / 1000)).toFixed(2)} GB/s`;
    const rows: Row[] = [
      { metric: `${(total / 1e6).toFixed(0)} MB in ${FILES} files: first match (rg engine)`, value: fmtMs(first), target: '< 1 s', pass: first < 1000 },
      { metric: 'whole scan: jobdeck (rg --json) / rg -c alone, same files', value: `${fmtMs(whole)} (${rate(whole)}) / ${fmtMs(rgAlone)} (${rate(rgAlone)}); ratio ${(whole / rgAlone).toFixed(2)}×` },
      { metric: 'matches found (10 expected)', value: String(runs[0].matches), pass: runs.every((r) => r.matches === 10) },
      { metric: 'Node scan (no rg): first match / whole scan', value: `${fmtMs(node.firstMs)} / ${fmtMs(node.totalMs)} (${rate(node.totalMs)}); ${node.matches} matches` },
      { metric: 'this process: RSS peak over before', value: `${((peak - rss0) / 1e6).toFixed(1)} MB (before ${(rss0 / 1e6).toFixed(0)} MB)` },
    ];
    return { rows, data: { totalBytes: total, files: FILES, runs, rgAloneMs: alone, node, rssBefore: rss0, rssPeak: peak, firstMs: round(first), wholeMs: round(whole) }, notes: total < 2e9 ? [`${(total / 1e6).toFixed(0)} MB; the issue's size is 2 GB (--grep-bytes=2000000000)`] : [] };
  },
};
