/**
 * The charts page's aggregates (GET /api/insights: lib/api/insights.ts over lib/store
 * insightRows) computed by each database from seeded jobs and events with known times, at a
 * fixed "now": finished jobs, and jobs still running (their run time counts up to now, whatever
 * the range — not up to the end of the range's last bucket).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { insights, parseInsightsQuery, type InsightRange } from '../../lib/api/insights';
import { ApiError } from '../../lib/api/errors';
import { storeOf } from '../helpers/store';
import { submit } from './monitor-helpers';

// Twenty minutes past the hour: the 24 h range's last bucket (12:15–12:30) holds it, the 7 d
// range's (12:00–13:00) and the 30 d range's (12:00–18:00) end well after it.
const NOW = new Date('2026-03-10T12:20:00.000Z');
const H = 3_600_000;
const at = (hoursAgo: number, plusMs = 0) => new Date(NOW.getTime() - hoursAgo * H + plusMs);

/** A job submitted `hoursAgo`, started `waitS` later; ended `status` after `runS`, or still RUNNING (runS null). */
async function seed(db: PrismaClient, name: string, hoursAgo: number, waitS: number, runS: number | null, status: 'SUCCEEDED' | 'FAILED' | 'RUNNING') {
  const id = await submit(db, `name: ${name}\nrun: "true"\n`);
  const submittedAt = at(hoursAgo);
  const startedAt = at(hoursAgo, waitS * 1000);
  const endedAt = runS === null ? null : at(hoursAgo, (waitS + runS) * 1000);
  await db.job.update({ where: { id }, data: { status, submittedAt, startedAt, endedAt } });
  await db.jobEvent.createMany({
    data: [
      { jobId: id, at: startedAt, entity: 'job', from: 'PENDING', to: 'STARTING' },
      ...(endedAt ? [{ jobId: id, at: endedAt, entity: 'job', from: 'RUNNING', to: status }] : []),
    ],
  });
}

describe.each(DB_KINDS)('insights on %s', (kind) => {
  const t = useDatabase(kind, `insights-${kind}`, { isolation: 'file' });
  let db: PrismaClient;
  beforeAll(async () => {
    db = t.prisma;
    // Two hours ago: waits 10 s and 20 s and 30 s, runs 60/120/180 s; one of them FAILED.
    await seed(db, 'train', 2, 10, 60, 'SUCCEEDED');
    await seed(db, 'train', 2, 20, 120, 'SUCCEEDED');
    await seed(db, 'eval', 2, 30, 180, 'FAILED');
    // Three days ago: only in the 7 d and 30 d ranges.
    await seed(db, 'old', 72, 5, 5, 'SUCCEEDED');
    // Four `sleep 90` jobs submitted 20 s ago, running for 15 s now.
    for (let i = 0; i < 4; i++) await seed(db, 'sleep', 20 / 3600, 5, null, 'RUNNING');
  });

  it('24 h: 15-minute buckets with jobs started/ended by status, wait and run p50/p95, the busiest names, the totals', async () => {
    const v = await insights(storeOf(db), '24h', NOW);
    expect(v.bucketSeconds).toBe(900);
    expect(v.buckets).toHaveLength(96);
    expect(v.to).toBe('2026-03-10T12:30:00.000Z');
    expect(v.from).toBe('2026-03-09T12:30:00.000Z');
    expect(v.now).toBe(NOW.toISOString());
    // 10:20:10–10:20:30 starts, 10:21:10–10:23:30 ends: all in the 10:15 bucket.
    const i = v.buckets.indexOf('2026-03-10T10:15:00.000Z');
    expect(i).toBeGreaterThanOrEqual(0);
    expect(v.started[i]).toBe(3);
    expect(v.ended.SUCCEEDED[i]).toBe(2);
    expect(v.ended.FAILED[i]).toBe(1);
    expect(v.queueWait.p50[i]).toBeCloseTo(20, 6);
    expect(v.queueWait.p95[i]).toBeCloseTo(29, 6); // percentile_cont: 20 + 0.9 × 10
    expect(v.runDuration.p50[i]).toBeCloseTo(120, 6);
    expect(v.queueWait.jobs[i]).toBe(3);
    expect(v.queueWait.p50[0]).toBeNull();
    // The running jobs started in the last bucket (12:15–12:30): it holds now.
    expect(v.started[95]).toBe(4);
    expect(v.started.reduce((a, b) => a + b, 0)).toBe(7);
    expect(v.busiest).toEqual([
      { name: 'sleep', jobs: 4, failed: 0, runSeconds: 60 },
      { name: 'train', jobs: 2, failed: 0, runSeconds: 180 },
      { name: 'eval', jobs: 1, failed: 1, runSeconds: 180 },
    ]);
    expect(v.totals.started).toBe(7);
    expect(v.totals.ended).toEqual({ FAILED: 1, SUCCEEDED: 2 });
    // Waits 10, 20, 30 and 5 × 4 s: p50 5 s … the running jobs' waits count, their runs do not.
    expect(v.totals.queueWait.jobs).toBe(7);
    expect(v.totals.queueWait.p50).toBeCloseTo(5, 6);
    expect(v.totals.runDuration).toMatchObject({ jobs: 3 });
    expect(v.totals.runDuration.p50).toBeCloseTo(120, 6);
  });

  it.each<[InsightRange, number, number]>([
    ['7d', 3600, 168],
    ['30d', 21_600, 120],
  ])('%s: the older job in; running jobs still count 15 s each, up to now', async (range, bucketSeconds, n) => {
    const v = await insights(storeOf(db), range, NOW);
    expect(v.bucketSeconds).toBe(bucketSeconds);
    expect(v.buckets).toHaveLength(n);
    expect(Date.parse(v.to)).toBeGreaterThan(NOW.getTime());
    expect(v.started.reduce((a, b) => a + b, 0)).toBe(8);
    expect(v.totals.started).toBe(8);
    expect(v.totals.ended).toEqual({ FAILED: 1, SUCCEEDED: 3 });
    expect(v.busiest.map((b) => b.name)).toEqual(['sleep', 'train', 'eval', 'old']);
    expect(v.busiest[0]).toEqual({ name: 'sleep', jobs: 4, failed: 0, runSeconds: 60 });
    expect(v.started[v.buckets.length - 1]).toBe(4);
  });

  it('an empty range: zeros and nulls, totals with no jobs', async () => {
    const v = await insights(storeOf(db), '24h', new Date('2020-01-01T00:00:00.000Z'));
    expect(v.started.every((x) => x === 0)).toBe(true);
    expect(v.ended).toEqual({});
    expect(v.busiest).toEqual([]);
    expect(v.totals).toEqual({ started: 0, ended: {}, queueWait: { p50: null, p95: null, jobs: 0 }, runDuration: { p50: null, p95: null, jobs: 0 } });
  });
});

describe('the range parameter', () => {
  it('defaults to 24h and refuses anything but 24h, 7d, 30d with a 400 naming it', () => {
    expect(parseInsightsQuery(new URL('http://x/api/insights'))).toEqual({ range: '24h' });
    expect(parseInsightsQuery(new URL('http://x/api/insights?range=30d'))).toEqual({ range: '30d' });
    let err: unknown;
    try {
      parseInsightsQuery(new URL('http://x/api/insights?range=1y'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toMatch(/range/);
  });
});
