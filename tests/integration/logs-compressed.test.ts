/**
 * Compressed finished logs through every reader (docs/design.md §8 "Compressed logs"), on both
 * databases, in process: the monitor's compressor (lib/monitor/compress.ts, its round run by
 * compressNow()) replaces the logs of finished attempts — rank logs included — and then the REST
 * range and download (with and without `Accept-Encoding: gzip`), the whole-job download, the job
 * stream replayed from an offset, and both grep engines answer exactly what the plain files
 * answered (sha256). A log being streamed while it is compressed stays byte-exact. The
 * compressor leaves what it must alone (a recent end, a running attempt), cleans a crashed
 * compression's temp, and writes nothing back for a job whose logs the retention policy removed
 * meanwhile; the retention system counts and removes the compressed files.
 */
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobLogResponse } from '../../lib/api/job-log';
import { getLogRange, logDownloadResponse } from '../../lib/api/logs';
import { getJobDetail } from '../../lib/api/views';
import { createLocalExecutor } from '../../lib/executors/local/executor';
import { jobsRoot, rankLogPath, timesPath } from '../../lib/jobs/paths';
import { compressLog } from '../../lib/logs/compress';
import { grepLogs, hasRipgrep } from '../../lib/logs/grep';
import { readLogRange } from '../../lib/logs/reader';
import { gzPathOf } from '../../lib/logs/source';
import { createMonitor, type Monitor } from '../../lib/monitor/monitor';
import { logBytesUnder } from '../../lib/monitor/retention';
import { DB_KINDS } from '../helpers/db';
import { storeOf } from '../helpers/store';
import { useDatabase } from '../helpers/use-database';
import { ByteLedger, JobDriver, startWsServer, StreamClient, type WsServer } from './ws-fixtures';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const NEEDLE = 'NEEDLE-compressed-7f3a';

/** `size` bytes of log: text lines, base64 lines, a needle line every ~100 KB, invalid UTF-8 now and then. */
function logBytes(size: number): Buffer {
  const parts: Buffer[] = [];
  let len = 0;
  for (let i = 0; len < size; i++) {
    const l = i % 1500 === 750 ? Buffer.from(`step ${i} ${NEEDLE} here\n`) : i % 4 === 0 ? Buffer.from(`${randomBytes(57).toString('base64')}\n`) : i % 333 === 0 ? Buffer.from([0x62, 0xff, 0xfe, 0xc3, 0x0a]) : Buffer.from(`2026-12-03 step=${i} loss=${(i % 977) / 313} lr=3e-4 ✓\n`);
    parts.push(l);
    len += l.length;
  }
  return Buffer.concat(parts).subarray(0, size);
}

async function body(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

describe.each(DB_KINDS)('compressed logs (%s)', (kind) => {
  const tdb = useDatabase(kind, `logs-compressed-${kind}`);
  let home: string;
  let keep: string;
  let srv: WsServer;
  const monitors: Monitor[] = [];
  beforeAll(async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-logs-compressed-'));
    keep = path.join(home, 'originals');
    mkdirSync(keep);
    srv = await startWsServer(tdb.db, { highWater: 64 * 1024, totalHighWater: 256 * 1024 });
  });
  afterAll(async () => {
    for (const m of monitors) await m.stop();
    await srv?.close();
    rmSync(home, { recursive: true, force: true });
  });
  const monitor = (afterMs: number | null = 0) => {
    const m = createMonitor({ store: storeOf(tdb.db.prisma), db: tdb.db.prisma, executor: createLocalExecutor({ cpus: 1, pollMs: 200 }), home, compress: { afterMs, intervalMs: 600_000 }, logTimes: false });
    monitors.push(m);
    return m;
  };
  let n = 0;
  /** Writes a log (and a copy of it outside the jobs folder, to compare with). @returns the copy's path. */
  const write = (file: string, data: Buffer) => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, data);
    const copy = path.join(keep, `${n++}.log`);
    copyFileSync(file, copy);
    return copy;
  };
  /** A finished job: one task, attempt 1 FAILED then attempt 2 SUCCEEDED, with these logs. */
  async function finishedJob(logs: [Buffer, Buffer], opts: { nodes?: number } = {}) {
    const d = await JobDriver.create(tdb.db.prisma, jobsRoot(home), { maxRestarts: 1, ...(opts.nodes ? { nodes: opts.nodes } : {}) });
    const a1 = await d.startAttempt(0, 1);
    const c1 = write(d.logPath(0, 1), logs[0]);
    await d.endAttempt(a1, 'FAILED', 1);
    const a2 = await d.startAttempt(0, 2, 'restart');
    const c2 = write(d.logPath(0, 2), logs[1]);
    await d.endAttempt(a2, 'SUCCEEDED', 0);
    await d.endTask(0, 'SUCCEEDED', 0);
    await d.endJob('SUCCEEDED');
    return { d, copies: [c1, c2] };
  }

  it('answers every read of a compressed log exactly as the plain file did', async () => {
    const logs: [Buffer, Buffer] = [logBytes(3_000_000), Buffer.concat([Buffer.from('x'.repeat(2_000_000)), Buffer.from(` ${NEEDLE} at the end of one long line`)])];
    const { d, copies } = await finishedJob(logs, { nodes: 2 });
    const rank1 = logBytes(700_000);
    write(rankLogPath(d.logPath(0, 2), 1), rank1);
    const store = storeOf(tdb.db.prisma);
    const wholeBefore = sha(await body(await jobLogResponse(store, d.jobId)));
    const diskBefore = await logBytesUnder(jobsRoot(home));

    const m = monitor();
    await m.compressNow();
    const files = [d.logPath(0, 1), d.logPath(0, 2), rankLogPath(d.logPath(0, 2), 1)];
    for (const f of files) expect([existsSync(f), existsSync(gzPathOf(f))]).toEqual([false, true]);
    const gzBytes = files.reduce((s, f) => s + statSync(gzPathOf(f)).size, 0);
    expect(m.compressStats()).toMatchObject({ rounds: 1, attempts: 2, files: 3, bytesIn: logs[0].length + logs[1].length + rank1.length, bytesOut: gzBytes });
    const rows = await tdb.db.prisma.attempt.findMany({ where: { jobId: d.jobId }, select: { logCompressedAt: true } });
    expect(rows.every((r) => r.logCompressedAt !== null)).toBe(true);
    // Disk usage counts what is on disk.
    expect(await logBytesUnder(jobsRoot(home))).toBe(diskBefore - (logs[0].length + logs[1].length + rank1.length) + gzBytes);
    // A job's usage: every attempt's compressed log, rank log included, and any time index.
    const timesBytes = files.reduce((s, f) => s + (existsSync(timesPath(f)) ? statSync(timesPath(f)).size : 0), 0);
    expect((await getJobDetail(store, d.jobId))!.logBytesTotal).toBe(gzBytes + timesBytes);

    // Range reads: the same answer as the original file's.
    for (let i = 0; i < 30; i++) {
      const attempt = 1 + (i % 2);
      const data = logs[attempt - 1];
      const offset = Math.floor(Math.random() * data.length);
      const limit = 1 + Math.floor(Math.random() * 1_048_576);
      const r = await getLogRange(store, d.jobId, { task: 0, attempt, offset, limit });
      const o = await readLogRange(copies[attempt - 1], offset, limit, { complete: true });
      expect(r).toMatchObject({ offset: o.offset, nextOffset: o.nextOffset, size: data.length, complete: o.nextOffset >= data.length });
      expect(sha(Buffer.from(r.data))).toBe(sha(Buffer.from(o.data.toString('utf8'))));
    }
    await expect(getLogRange(store, d.jobId, { task: 0, attempt: 1, offset: logs[0].length + 1, limit: 10 })).rejects.toMatchObject({ status: 416 });

    // Downloads: gzip as it is when accepted, inflated otherwise; the log's bytes either way.
    const plainRes = await logDownloadResponse(store, d.jobId, { task: 0, attempt: 1 }, { acceptEncoding: 'br;q=1, gzip;q=0' });
    expect([plainRes.headers.get('content-encoding'), plainRes.headers.get('content-length'), plainRes.headers.get('vary')]).toEqual([null, String(logs[0].length), 'Accept-Encoding']);
    expect(sha(await body(plainRes))).toBe(sha(logs[0]));
    const gzRes = await logDownloadResponse(store, d.jobId, { task: 0, attempt: 1 }, { acceptEncoding: 'gzip, deflate, br' });
    expect([gzRes.headers.get('content-encoding'), gzRes.headers.get('content-length')]).toEqual(['gzip', String(statSync(gzPathOf(files[0])).size)]);
    const gz = await body(gzRes);
    expect(gz.length).toBe(statSync(gzPathOf(files[0])).size);
    expect(sha(zlib.gunzipSync(gz))).toBe(sha(logs[0]));
    const rankRes = await logDownloadResponse(store, d.jobId, { task: 0, attempt: 2, rank: 1 }, { acceptEncoding: '*' });
    expect(rankRes.headers.get('content-encoding')).toBe('gzip');
    expect(sha(zlib.gunzipSync(await body(rankRes)))).toBe(sha(rank1));
    expect(sha(await body(await jobLogResponse(store, d.jobId)))).toBe(wholeBefore);

    // The job stream replayed from an offset of attempt 1: the rest of it, then all of attempt 2 (both ranks).
    const from = 1_234_567;
    const ledger = new ByteLedger();
    ledger.next.set('0/1', from);
    const c = await StreamClient.connect(`${srv.url}/ws/jobs/${d.jobId}?task=0&attempt=1&offset=${from}&follow=0`, ledger);
    await c.done();
    expect(ledger.sha256(0, 1)).toBe(sha(logs[0].subarray(from)));
    expect(ledger.sha256(0, 2)).toBe(sha(logs[1]));
    expect(ledger.sha256(0, 2, 1)).toBe(sha(rank1));

    // Both search engines find the needles on the lines the plain files have them on.
    const engines = hasRipgrep() ? (['rg', 'node'] as const) : (['node'] as const);
    for (const engine of engines) {
      const found = async (paths: string[]) => {
        const out: string[] = [];
        const s = await grepLogs(paths.map((p, i) => ({ path: p, key: i })), { pattern: NEEDLE, maxResults: 1000, maxMs: 30_000, engine }, (x) => out.push(`${x.key}:${x.line}:${x.text.length}:${sha(Buffer.from(x.text))}`));
        expect(s.reason).toBe('done');
        return out.sort();
      };
      const want = await found(copies);
      expect(want.length).toBeGreaterThan(2);
      expect(await found([d.logPath(0, 1), d.logPath(0, 2)]), engine).toEqual(want);
      // In the instant a log exists under both names (renamed in, not yet unlinked): each match once.
      const again = path.join(home, `both-${engine}`, 'run.log');
      write(again, logs[0]);
      let during: string[] = [];
      await compressLog(again, { beforeUnlink: async () => void (during = await found([again, copies[1]])) });
      expect(during.length).toBeGreaterThan(2);
      expect(during).toEqual(want);
    }
  });

  it('keeps a log that is being streamed while it is compressed byte-exact', async () => {
    const data = logBytes(40_000_000);
    const { d } = await finishedJob([data, Buffer.from('second attempt\n'.repeat(400))]);
    const c = await StreamClient.connect(`${srv.url}/ws/jobs/${d.jobId}?follow=0`);
    await c.until(() => c.logBytes >= 1_000_000, 120_000, 'the first megabyte');
    // Hold the client: the server's stream stops at its high-water mark, its log still open.
    c.ws.pause();
    await new Promise((r) => setTimeout(r, 300));
    await monitor().compressNow();
    expect([existsSync(d.logPath(0, 1)), existsSync(gzPathOf(d.logPath(0, 1)))]).toEqual([false, true]);
    expect(c.logBytes).toBeLessThan(data.length / 2);
    c.ws.resume();
    await c.done(60_000);
    expect(c.ledger.sha256(0, 1)).toBe(sha(data));
    expect(c.ledger.sha256(0, 2)).toBe(sha(Buffer.from('second attempt\n'.repeat(400))));
  });

  it('leaves recent, running and small logs, cleans a crashed temp, and writes nothing back for removed logs', async () => {
    const big = logBytes(300_000);
    const { d: done } = await finishedJob([big, Buffer.from('tiny\n')]);
    // A crashed compression's temp beside the log (its process is gone: a pid that cannot exist here).
    const host = os.hostname().replace(/[^A-Za-z0-9]+/g, '_').slice(0, 64);
    const temp = path.join(path.dirname(done.logPath(0, 1)), `attempt-1.log.gz.tmp-${host}-4194305-0badf00d`);
    writeFileSync(temp, randomBytes(5000));
    const running = await JobDriver.create(tdb.db.prisma, jobsRoot(home));
    await running.startAttempt(0, 1);
    write(running.logPath(0, 1), big);
    const { d: removed } = await finishedJob([big, big]);
    await tdb.db.prisma.job.update({ where: { id: removed.jobId }, data: { logsRemovedAt: new Date() } });

    // Ended less than an hour ago: nothing yet.
    const later = monitor(3_600_000);
    await later.compressNow();
    expect(later.compressStats()).toMatchObject({ rounds: 1, attempts: 0, files: 0 });
    expect(existsSync(temp)).toBe(true);

    const m = monitor();
    await m.compressNow();
    expect(readdirSync(path.dirname(done.logPath(0, 1))).sort()).toEqual(['attempt-1.log.gz', 'attempt-2.log']);
    expect(existsSync(running.logPath(0, 1))).toBe(true);
    expect(readdirSync(path.dirname(removed.logPath(0, 1)))).toEqual([]);
    const handled = await tdb.db.prisma.attempt.findMany({ where: { logCompressedAt: { not: null } }, select: { jobId: true } });
    expect(handled.map((h) => h.jobId).sort()).toEqual([done.jobId, done.jobId, removed.jobId, removed.jobId].sort());
    // Handled once: a second round finds nothing.
    await m.compressNow();
    expect(m.compressStats()).toMatchObject({ rounds: 2, attempts: 4 });
  });

  it('lets the retention policy count and remove compressed logs', async () => {
    const { d } = await finishedJob([logBytes(500_000), logBytes(200_000)]);
    await monitor().compressNow();
    const gz = [1, 2].map((a) => statSync(gzPathOf(d.logPath(0, a))).size);
    await tdb.db.prisma.job.update({ where: { id: d.jobId }, data: { endedAt: new Date(Date.now() - 10 * 86_400_000) } });
    const r = createMonitor({ store: storeOf(tdb.db.prisma), db: tdb.db.prisma, executor: createLocalExecutor({ cpus: 1, pollMs: 200 }), home, retention: { logsDays: 1, logsBytes: null, jobsDays: null, intervalMs: 600_000, batch: 10 } });
    monitors.push(r);
    await r.retainNow();
    expect(readdirSync(path.dirname(d.logPath(0, 1)))).toEqual([]);
    expect(r.retentionStats()).toMatchObject({ logsRemovedJobs: 1, filesRemoved: 2, bytesFreed: gz[0] + gz[1] });
  });
});
