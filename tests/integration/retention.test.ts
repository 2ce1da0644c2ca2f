/**
 * The retention system (lib/monitor/retention.ts, lib/store/retention.ts; docs/design.md
 * "Retention") on both databases, with real log files and a real job stream: a pass removes
 * exactly the logs and jobs the policy and the jobs' own `retention:` say, never those of a job
 * that is not terminal, frees the bytes on disk, records each removal (Job.logsRemovedAt and a
 * LOGS_REMOVED entry) and answers 410 with "logs removed on … by the retention policy" for them;
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
import { createLocalExecutor } from '../../lib/executors/local';
import { uploadsDir } from '../../lib/executors/upload';
import { jobsRoot } from '../../lib/jobs/paths';
import { CLOSE } from '../../lib/logs/protocol';
import { createMonitor, type Monitor } from '../../lib/monitor/monitor';
import { logBytesUnder } from '../../lib/monitor/retention';
import type { RetentionPolicy } from '../../lib/monitor/retention-config';
import { DB_KINDS } from '../helpers/db';
import { storeOf } from '../helpers/store';
import { useDatabase } from '../helpers/use-database';
import { ByteLedger, JobDriver, startWsServer, StreamClient, type WsServer } from './ws-fixtures';

const DAY = 86_400_000;

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
    await new Promise((r) => setTimeout(r, 200));
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
  });
});
