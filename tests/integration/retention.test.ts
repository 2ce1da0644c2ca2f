/**
 * The retention system (lib/monitor/retention.ts, lib/store/retention.ts; docs/design.md
 * "Retention") on both databases, with real log files and a real job stream: a pass removes
 * exactly the logs and jobs the policy and the jobs' own `retention:` say, never those of a job
 * that is not terminal, frees the blocks on disk (measured as blocks, not summed sizes), records
 * each removal (Job.logsRemovedAt and a LOGS_REMOVED entry; a deleted job's rows — tasks, attempts,
 * history — and folder gone, and one `retention.jobs` audit row by the server; removed uploads one
 * `retention.uploads` row) and answers 410 with "logs removed on … by the retention policy" for them;
 * a client following a log that is removed is told so and the stream closes; stored uploads no
 * job names any more (and older than a day) are removed, those a kept job names stay.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/api/errors';
import { getLogRange } from '../../lib/api/logs';
import { getJobDetail } from '../../lib/api/views';
import { createLocalExecutor } from '../../lib/executors/local/executor';
import { uploadsDir } from '../../lib/uploads/upload';
import { auditPage } from '../../lib/api/audit';
import { jobDir, jobsRoot, rankLogPath, timesPath } from '../../lib/jobs/paths';
import { CLOSE } from '../../lib/logs/protocol';
import { createMonitor, type Monitor } from '../../lib/monitor/monitor';
import { logBytesUnder } from '../../lib/monitor/retention';
import type { RetentionPolicy } from '../../lib/monitor/retention-config';
import { DB_KINDS } from '../helpers/db';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import { storeOf } from '../helpers/store';
import { useDatabase } from '../helpers/use-database';
import { ByteLedger, JobDriver, startWsServer, StreamClient, type WsServer } from './ws-fixtures';

const DAY = 86_400_000;

/** What a file takes on disk (its blocks × 512 bytes), 0 when it is gone. */
function diskBytes(f: string): number {
  try {
    return statSync(f).blocks * 512;
  } catch {
    return 0;
  }
}

/** What the files under `dir` take on disk (blocks × 512 bytes). */
function diskBytesUnder(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n += diskBytes(path.join(e.parentPath, e.name));
  return n;
}

describe.each(DB_KINDS)('retention (%s)', (kind) => {
  const tdb = useDatabase(kind, `retention-${kind}`);
  let home: string;
  let srv: WsServer;
  const monitors: Monitor[] = [];
  beforeAll(async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-retention-'));
    srv = await startWsServer(tdb.db);
  });
  afterAll(async () => {
    for (const m of monitors) await m.stop();
    await srv?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const monitor = (policy: Partial<RetentionPolicy>) => {
    const retention: RetentionPolicy = { logsDays: null, logsBytes: null, jobsDays: null, intervalMs: 600_000, batch: 2, ...policy };
    const m = createMonitor({ store: storeOf(tdb.db.prisma), db: tdb.db.prisma, executor: createLocalExecutor({ cpus: 1, pollMs: 200 }), home, retention });
    monitors.push(m);
    return m;
  };

  /** A job with one attempt whose log holds `bytes` bytes; ended `daysAgo` days ago unless `running`. */
  async function job(name: string, bytes: number, o: { daysAgo?: number; running?: boolean; retention?: object } = {}) {
    const d = await JobDriver.create(tdb.db.prisma, jobsRoot(home), { name });
    const a = await d.startAttempt(0, 1);
    mkdirSync(path.dirname(d.logPath(0, 1)), { recursive: true });
    writeFileSync(d.logPath(0, 1), 'x'.repeat(bytes - 1) + '\n');
    if (!o.running) {
      await d.endAttempt(a, 'SUCCEEDED', 0);
      await d.endTask(0, 'SUCCEEDED', 0);
      await d.endJob('SUCCEEDED');
    }
    const row = await tdb.db.prisma.job.findUniqueOrThrow({ where: { id: d.jobId } });
    // A job that is not terminal has no end; one is written here to show the guard holds anyway.
    await tdb.db.prisma.job.update({
      where: { id: d.jobId },
      data: { endedAt: new Date(Date.now() - (o.daysAgo ?? 0) * DAY), ...(o.retention ? { spec: { ...(row.spec as object), retention: o.retention } } : {}) },
    });
    return d;
  }
  const removedAt = async (d: JobDriver) => (await tdb.db.prisma.job.findUnique({ where: { id: d.jobId }, select: { logsRemovedAt: true } }))?.logsRemovedAt ?? null;

  it('removes exactly the logs and jobs past their period, never a running job, and frees the disk', async () => {
    const old = await job('old', 10_000, { daysAgo: 10 });
    const recent = await job('recent', 10_000, { daysAgo: 3 });
    const forever = await job('forever', 10_000, { daysAgo: 400, retention: { logs: 'forever', job: 'forever' } });
    const ownShort = await job('own-short', 10_000, { daysAgo: 2, retention: { logs: 1 } });
    const ancient = await job('ancient', 10_000, { daysAgo: 40 });
    const running = await job('running', 10_000, { daysAgo: 100, running: true });
    // The ancient job's own folder, with a file the executor left: it goes with the row.
    const folder = jobDir(ancient.jobId, home);
    mkdirSync(path.join(folder, 'task-0', 'attempt-1'), { recursive: true });
    writeFileSync(path.join(folder, 'task-0', 'attempt-1', 'wrapper.json'), 'w'.repeat(5_000));
    const removedFiles = [old.logPath(0, 1), ownShort.logPath(0, 1), ancient.logPath(0, 1), path.join(folder, 'task-0', 'attempt-1', 'wrapper.json')];
    const blocksOf = removedFiles.reduce((n, f) => n + diskBytes(f), 0);
    const diskBefore = diskBytesUnder(jobsRoot(home));
    expect(blocksOf).toBeGreaterThanOrEqual(35_000);
    const before = await logBytesUnder(jobsRoot(home));
    const m = monitor({ logsDays: 7, jobsDays: 30 });
    await m.retainNow();

    expect(existsSync(old.logPath(0, 1))).toBe(false);
    expect(existsSync(ownShort.logPath(0, 1))).toBe(false);
    for (const d of [recent, forever, running]) expect(existsSync(d.logPath(0, 1))).toBe(true);
    expect(await removedAt(old)).not.toBeNull();
    expect(await removedAt(ownShort)).not.toBeNull();
    for (const d of [recent, forever, running]) expect(await removedAt(d)).toBeNull();
    // Past the record's 30 days: the job is gone (its logs first went with the 7 days).
    expect(await tdb.db.prisma.job.findUnique({ where: { id: ancient.jobId } })).toBeNull();
    expect(await tdb.db.prisma.job.findUnique({ where: { id: forever.jobId } })).not.toBeNull();
    expect((await tdb.db.prisma.job.findUnique({ where: { id: running.jobId } }))?.status).toBe('RUNNING');
    expect(await logBytesUnder(jobsRoot(home))).toBe(before - 30_000);
    const s = m.retentionStats();
    expect([s.logsRemovedJobs, s.filesRemoved, s.bytesFreed, s.jobsDeleted, s.logBytes]).toEqual([3, 3, 30_000, 1, before - 30_000]);
    // The disk blocks those files held are free: what the jobs folder takes on disk fell by them.
    for (const f of removedFiles) expect(existsSync(f)).toBe(false);
    expect(existsSync(folder)).toBe(false);
    expect(diskBefore - diskBytesUnder(jobsRoot(home))).toBeGreaterThanOrEqual(blocksOf);
    // The deleted job's tasks, attempts and history went with its row.
    const of = { where: { jobId: ancient.jobId } };
    expect([await tdb.db.prisma.task.count(of), await tdb.db.prisma.attempt.count(of), await tdb.db.prisma.jobEvent.count(of)]).toEqual([0, 0, 0]);
    // The delete is in the audit log, as the server's: the job ids and what their folders held.
    const audit = await auditPage(storeOf(tdb.db.prisma), new URL('http://x/api/audit?action=retention.jobs'));
    expect(audit.events.map((e) => [e.action, e.userId, e.userName, e.tokenPrefix, e.ip, e.detail])).toEqual([['retention.jobs', null, null, null, null, { count: 1, ids: [ancient.jobId], bytes: 5_000 }]]);

    const events = await tdb.db.prisma.jobEvent.findMany({ where: { jobId: old.jobId, to: 'LOGS_REMOVED' } });
    expect(events.map((e) => [e.entity, e.reason])).toEqual([['server', 'logs removed by the retention policy (1 file, 10000 bytes)']]);
    const detail = await getJobDetail(storeOf(tdb.db.prisma), old.jobId);
    expect(detail?.logsRemovedAt).toBe((await removedAt(old))!.toISOString());
    const err = await getLogRange(storeOf(tdb.db.prisma), old.jobId, { task: 0, offset: 0, limit: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect([(err as ApiError).status, (err as ApiError).detail]).toEqual([410, expect.stringMatching(/^job \d+: logs removed on \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC by the retention policy$/)]);
    // A second pass finds nothing more to do.
    await m.retainNow();
    expect(m.retentionStats().logsRemovedJobs).toBe(3);
  });

  it('keeps all logs under the size limit by removing the oldest finished jobs first', async () => {
    const root = jobsRoot(home);
    const now = await logBytesUnder(root);
    const a = await job('size-a', 1_000_000, { daysAgo: 5 });
    const b = await job('size-b', 1_000_000, { daysAgo: 4 });
    const c = await job('size-c', 1_000_000, { daysAgo: 3 });
    // Room for the logs already there and one more megabyte: a and b (the oldest) go.
    const m = monitor({ logsBytes: now + 1_000_000 });
    await m.retainNow();
    expect([await removedAt(a), await removedAt(b)].every((x) => x !== null)).toBe(true);
    expect(await removedAt(c)).toBeNull();
    expect(await logBytesUnder(root)).toBeLessThanOrEqual(now + 1_000_000);
    expect(m.retentionStats().logBytes).toBe(await logBytesUnder(root));
  });

  it('tells a client following a log that is removed, and closes the stream', async () => {
    // A finished job's long log being replayed to a client that reads slowly: the stream is open
    // (the server waits for the client) when the pass removes the log.
    const d = await job('followed', 20_000_000, { daysAgo: 10 });
    const c = await StreamClient.connect(`${srv.url}/ws/jobs/${d.jobId}?follow=1`, new ByteLedger());
    const sock = (c.ws as unknown as { _socket: Socket })._socket;
    sock.pause();
    // The server is mid-log, held back by the client: bytes wait on its socket (backpressure).
    for (const end = Date.now() + 120_000; !(srv.hub.streamsOf(d.jobId) === 1 && srv.hub.bufferedBytes() > 0); ) {
      if (Date.now() > end) throw new Error('the stream never filled its socket');
      await new Promise((r) => setTimeout(r, 20));
    }
    await monitor({ logsDays: 7 }).retainNow();
    expect(await removedAt(d)).not.toBeNull();
    sock.resume();
    const closed = await c.closed;
    expect(closed.code).toBe(CLOSE.LOGS_REMOVED);
    expect(c.logBytes).toBeLessThan(20_000_000);
    const last = c.messages[c.messages.length - 1];
    expect(last).toMatchObject({ type: 'error', code: 'logs_removed', message: expect.stringMatching(/^job \d+: logs removed on .* by the retention policy$/) });
    // A client that comes later is told at once, after the job's history.
    const late = await StreamClient.connect(`${srv.url}/ws/jobs/${d.jobId}?follow=1`, new ByteLedger());
    expect((await late.closed).code).toBe(CLOSE.LOGS_REMOVED);
    expect(late.messages.some((m) => m.type === 'hello')).toBe(true);
  });

  it('removes stored uploads older than a day that no job names, keeps those a kept job names and young ones, and frees the disk', async () => {
    const dir = uploadsDir(home);
    mkdirSync(dir, { recursive: true });
    const hash = (c: string) => c.repeat(64);
    /** An upload's archive (`bytes` bytes) and manifest, last written `daysAgo` days ago. */
    const upload = (h: string, bytes: number, daysAgo: number) => {
      const when = new Date(Date.now() - daysAgo * DAY);
      for (const [file, text] of [[`${h}.tar.gz`, 'z'.repeat(bytes)], [`${h}.json`, JSON.stringify({ hash: h, size: bytes })]] as const) {
        writeFileSync(path.join(dir, file), text);
        utimesSync(path.join(dir, file), when, when);
      }
    };
    const onDisk = () => readdirSync(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0);
    upload(hash('a'), 50_000, 10); // a kept job's workdir
    upload(hash('b'), 50_000, 10); // a kept job's file_mounts
    upload(hash('c'), 50_000, 10); // no job names it
    upload(hash('d'), 50_000, 0.5); // no job names it yet: its submit may be in flight
    upload(hash('e'), 50_000, 10); // only a job this pass deletes names it
    const kept = await job('uses-uploads', 100, { daysAgo: 1 });
    await tdb.db.prisma.job.update({ where: { id: kept.jobId }, data: { launch: { workdirUpload: hash('a'), fileMountUploads: { '/data': { hash: hash('b'), kind: 'dir' } } } } });
    const gone = await job('deleted-with-upload', 100, { daysAgo: 60 });
    await tdb.db.prisma.job.update({ where: { id: gone.jobId }, data: { launch: { workdirUpload: hash('e') } } });
    const before = onDisk();

    const m = monitor({ jobsDays: 30 });
    await m.retainNow();
    expect(await tdb.db.prisma.job.findUnique({ where: { id: gone.jobId } })).toBeNull();
    const left = readdirSync(dir).sort();
    expect(left).toEqual([hash('a'), hash('b'), hash('d')].flatMap((h) => [`${h}.json`, `${h}.tar.gz`]));
    const freed = before - onDisk();
    expect(freed).toBeGreaterThanOrEqual(2 * 50_000);
    expect(m.state().retention).toMatchObject({ uploadsRemoved: 2, uploadBytesFreed: freed });
    const audit = await auditPage(storeOf(tdb.db.prisma), new URL('http://x/api/audit?action=retention.uploads'));
    expect(audit.events.map((e) => [e.userName, e.detail])).toEqual([[null, { count: 2, ids: [hash('c'), hash('e')], bytes: freed }]]);
    // The job deleted in the same pass has its own row.
    const jobsRow = await auditPage(storeOf(tdb.db.prisma), new URL('http://x/api/audit?action=retention.jobs'));
    expect(jobsRow.events[0].detail).toMatchObject({ ids: [gone.jobId] });
  });

  it("counts a job's log usage as every file of its logs: rank logs and time indexes too", async () => {
    const d = await job('multi-node', 1_000, { daysAgo: 0 });
    writeFileSync(rankLogPath(d.logPath(0, 1), 1), 'r'.repeat(2_000));
    writeFileSync(timesPath(d.logPath(0, 1)), 't'.repeat(300));
    writeFileSync(timesPath(rankLogPath(d.logPath(0, 1), 1)), 't'.repeat(40));
    // Not a log's file: not counted.
    writeFileSync(path.join(path.dirname(d.logPath(0, 1)), 'notes.txt'), 'n'.repeat(7));
    const detail = await getJobDetail(storeOf(tdb.db.prisma), d.jobId);
    expect(detail?.logBytesTotal).toBe(1_000 + 2_000 + 300 + 40);
    expect(detail?.tasks[0].attemptList[0].logBytes).toBe(1_000);
  });
});

describe('retention on a running server', () => {
  let server: ServerProcess | undefined;
  afterAll(async () => server?.dispose());

  it('GET /api/monitor shows the logs on disk from the first pass, at start, without a size limit', async () => {
    // A data folder with logs already there (the server's own database starts empty).
    const home = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-retention-server-'));
    const attempt = path.join(jobsRoot(home), '7', 'task-0', 'attempt-1');
    mkdirSync(attempt, { recursive: true });
    writeFileSync(path.join(attempt, 'run.log'), 'l'.repeat(123_456));
    writeFileSync(path.join(attempt, 'run.times'), 't'.repeat(1_000));
    // The default interval (10 minutes): only a pass at start can have measured it.
    server = await startServerProcess({ home });
    let logBytes: number | null = null;
    for (let i = 0; i < 200 && logBytes === null; i++) {
      const state = (await (await server.api('/api/monitor')).json()) as { retention: { logBytes: number | null; intervalMs: number; passes: number } };
      expect(state.retention.intervalMs).toBe(600_000);
      logBytes = state.retention.logBytes;
      if (logBytes === null) await new Promise((r) => setTimeout(r, 100));
    }
    expect(logBytes).toBe(124_456);
  });
});
