/**
 * The charts page's aggregates (GET /api/insights: lib/api/insights.ts over lib/store
 * insightRows) computed by each database from seeded jobs and events with known times.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { insights, parseInsightsQuery } from '../../lib/api/insights';
import { ApiError } from '../../lib/api/errors';
import { storeOf } from '../helpers/store';
import { submit } from './monitor-helpers';

const NOW = new Date('2026-03-10T12:30:00.000Z');
const H = 3_600_000;
const at = (hoursAgo: number, plusMs = 0) => new Date(NOW.getTime() - hoursAgo * H + plusMs);

/** A finished job: submitted `hoursAgo`, started `waitS` later, ran `runS`, ended `status`. */
async function seed(db: PrismaClient, name: string, hoursAgo: number, waitS: number, runS: number, status: 'SUCCEEDED' | 'FAILED') {
  const id = await submit(db, `name: ${name}\nrun: "true"\n`);
  const submittedAt = at(hoursAgo);
  const startedAt = at(hoursAgo, waitS * 1000);
  const endedAt = at(hoursAgo, (waitS + runS) * 1000);
  await db.job.update({ where: { id }, data: { status, submittedAt, startedAt, endedAt } });
  await db.jobEvent.createMany({
    data: [
      { jobId: id, at: startedAt, entity: 'job', from: 'PENDING', to: 'STARTING' },
      { jobId: id, at: endedAt, entity: 'job', from: 'RUNNING', to: status },
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
  });

  it('24 h: hourly buckets with jobs started/ended by status, wait and run p50/p95, the busiest names', async () => {
    const v = await insights(storeOf(db), '24h', NOW);
    expect(v.bucketSeconds).toBe(3600);
    expect(v.buckets).toHaveLength(24);
    expect(v.to).toBe('2026-03-10T13:00:00.000Z');
    const i = v.buckets.indexOf('2026-03-10T10:00:00.000Z');
    expect(i).toBeGreaterThanOrEqual(0);
    expect(v.started.reduce((a, b) => a + b, 0)).toBe(3);
    expect(v.started[i]).toBe(3);
    expect(v.ended.SUCCEEDED[i]).toBe(2);
    expect(v.ended.FAILED[i]).toBe(1);
    expect(v.queueWait.p50[i]).toBeCloseTo(20, 6);
    expect(v.queueWait.p95[i]).toBeCloseTo(29, 6); // percentile_cont: 20 + 0.9 × 10
    expect(v.runDuration.p50[i]).toBeCloseTo(120, 6);
    expect(v.queueWait.jobs[i]).toBe(3);
    expect(v.queueWait.p50[0]).toBeNull();
    expect(v.busiest).toEqual([
      { name: 'train', jobs: 2, failed: 0, runSeconds: 180 },
      { name: 'eval', jobs: 1, failed: 1, runSeconds: 180 },
    ]);
  });

  it('7 d and 30 d take the older job in; 30 d has daily buckets', async () => {
    const week = await insights(storeOf(db), '7d', NOW);
    expect(week.buckets).toHaveLength(168);
    expect(week.started.reduce((a, b) => a + b, 0)).toBe(4);
    const month = await insights(storeOf(db), '30d', NOW);
    expect(month.bucketSeconds).toBe(86_400);
    expect(month.buckets).toHaveLength(30);
    expect(month.busiest.map((b) => b.name)).toEqual(['train', 'eval', 'old']);
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
