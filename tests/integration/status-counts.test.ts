/**
 * The unfiltered counts from the JobStatusDelta rows (docs/design.md §12 "Counts") are always
 * exactly what counting the jobs answers: after submits, single and bulk status changes, writes
 * that leave the status alone, deletes, an emptied table and folds — on both databases; on
 * PostgreSQL also with writers on other connections, one holding its uncommitted change across a
 * fold, and many at once while folds run. A database with jobs from before the counts table
 * migrates with its jobs counted.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../lib/db/migrate';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { ACTIVE_JOB_STATUSES } from '../../lib/jobs/capacity';
import { allJobStatusCounts, FOLD_ABOVE, foldStatusDeltas, queueGroups, submitJob, type StatusCounts, type Store } from '../../lib/store';
import { DB_KINDS } from '../helpers/db';
import { openEmptyRawSql } from '../helpers/raw-sql';
import { useDatabase } from '../helpers/use-database';

const COUNTS_MIGRATION = '20261225000000_job_status_counts';
const HELD_MIGRATION = '20261230000001_job_held_deltas';

function newJob(name: string) {
  return { name, specYaml: `name: ${name}\nrun: echo hi\n`, spec: { name }, specHash: 'h', cpus: 1, tasks: [{ name: 't0', spec: { run: 'echo' } }] };
}

/** The counts by reading every job: what the deltas must equal. */
async function counted(prisma: PrismaClient): Promise<StatusCounts> {
  const rows = await prisma.job.groupBy({ by: ['status'], _count: { _all: true } });
  const byStatus: StatusCounts['byStatus'] = {};
  let total = 0;
  for (const r of rows) {
    byStatus[r.status] = r._count._all;
    total += r._count._all;
  }
  return { total, byStatus };
}

const deltaRows = async (prisma: PrismaClient) => prisma.jobStatusDelta.count();

describe.each(DB_KINDS)('job status counts on %s', (kind) => {
  const t = useDatabase(kind, `status-counts-${kind}`);
  let prisma: PrismaClient;
  let store: Store;
  beforeAll(() => {
    ({ prisma, store } = t);
  });

  it('equal the counted jobs through submits, status changes, other writes and deletes', async () => {
    expect(await allJobStatusCounts(store)).toEqual({ total: 0, byStatus: {} });
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push((await submitJob(store, newJob(`c${i}`))).id);
    expect(await allJobStatusCounts(store)).toEqual({ total: 12, byStatus: { PENDING: 12 } });
    await prisma.job.update({ where: { id: ids[0] }, data: { status: 'RUNNING' } });
    await prisma.job.updateMany({ where: { id: { in: ids.slice(1, 6) } }, data: { status: 'CANCELLED' } });
    // A write that leaves the status alone appends nothing.
    const before = await deltaRows(prisma);
    await prisma.job.updateMany({ where: { id: { in: ids } }, data: { priority: 3 } });
    expect(await deltaRows(prisma)).toBe(before);
    await prisma.job.updateMany({ where: { id: { in: ids.slice(6, 9) } }, data: { status: 'FAILED' } });
    await prisma.job.deleteMany({ where: { id: { in: ids.slice(1, 3) } } });
    const want = { total: 10, byStatus: { PENDING: 3, RUNNING: 1, CANCELLED: 3, FAILED: 3 } };
    expect(await counted(prisma)).toEqual(want);
    expect(await allJobStatusCounts(store)).toEqual(want);
    await foldStatusDeltas(store);
    expect(await deltaRows(prisma)).toBe(4);
    expect(await allJobStatusCounts(store)).toEqual(want);
    await prisma.$executeRawUnsafe(`TRUNCATE "Job" CASCADE`);
    expect(await allJobStatusCounts(store)).toEqual({ total: 0, byStatus: {} });
  });

  it('fold by themselves once a read finds more than FOLD_ABOVE rows, and stay exact', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await submitJob(store, newJob(`f${i}`))).id);
    // Each single-row status change appends two rows (one status down, one up).
    const flips = Math.ceil(FOLD_ABOVE / 2) + 5;
    for (let i = 0; i < flips; i++) await prisma.job.update({ where: { id: ids[i % ids.length] }, data: { status: Math.floor(i / ids.length) % 2 ? 'PENDING' : 'RUNNING' } });
    expect(await deltaRows(prisma)).toBeGreaterThan(FOLD_ABOVE);
    const want = await counted(prisma);
    expect(await allJobStatusCounts(store)).toEqual(want);
    expect(await deltaRows(prisma)).toBeLessThanOrEqual(2);
    expect(await allJobStatusCounts(store)).toEqual(want);
  });

  it.runIf(kind === 'postgresql')('stay exact with writers on other connections and folds between them', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) ids.push((await submitJob(store, newJob(`p${i}`))).id);
    const other = new pg.Client({ connectionString: t.url! });
    await other.connect();
    try {
      // An uncommitted change across a fold: the fold does not see its rows and leaves them.
      await other.query('BEGIN');
      await other.query(`UPDATE "Job" SET "status" = 'SUCCEEDED' WHERE "id" = ANY($1::int[])`, [ids.slice(0, 10)]);
      await other.query(`INSERT INTO "Job" ("name", "specYaml", "spec", "specHash") VALUES ('raw', 'run: echo', '{}'::jsonb, 'h')`);
      await foldStatusDeltas(store);
      expect(await allJobStatusCounts(store)).toEqual({ total: 30, byStatus: { PENDING: 30 } });
      await other.query('COMMIT');
      expect(await allJobStatusCounts(store)).toEqual({ total: 31, byStatus: { PENDING: 21, SUCCEEDED: 10 } });
      // A rolled-back change leaves no row.
      await other.query('BEGIN');
      await other.query(`DELETE FROM "Job" WHERE "id" = ANY($1::int[])`, [ids.slice(10, 20)]);
      await other.query('ROLLBACK');
      expect(await allJobStatusCounts(store)).toEqual(await counted(prisma));
    } finally {
      await other.end();
    }
    // Many writers at once (the client's pool) and folds racing them.
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 60; i++) {
      const id = ids[i % ids.length];
      writes.push(i % 3 === 0 ? submitJob(store, newJob(`q${i}`)) : prisma.job.update({ where: { id }, data: { status: i % 2 ? 'FAILED' : 'RUNNING' } }));
      if (i % 10 === 0) writes.push(foldStatusDeltas(store));
    }
    await Promise.all(writes);
    expect(await allJobStatusCounts(store)).toEqual(await counted(prisma));
    await foldStatusDeltas(store);
    expect(await allJobStatusCounts(store)).toEqual(await counted(prisma));
  });
});

/** What admission sees held, by aggregating the active jobs: what queueGroups' delta sums must equal. */
async function heldByAggregate(prisma: PrismaClient): Promise<string[]> {
  const rows = await prisma.job.groupBy({ by: ['status', 'executor', 'queue'], where: { status: { in: [...ACTIVE_JOB_STATUSES] } }, _count: { _all: true }, _sum: { cpus: true, gpus: true } });
  return rows.map((r) => `${r.status} ${r.executor} ${r.queue} n=${r._count._all} cpus=${(r._sum.cpus ?? 0).toFixed(6)} gpus=${(r._sum.gpus ?? 0).toFixed(6)}`).sort();
}

async function heldByDeltas(store: Store, fold?: () => Promise<void>): Promise<string[]> {
  return (await queueGroups(store, fold))
    .filter((g) => g.status !== 'PENDING')
    .map((g) => `${g.status} ${g.executor} ${g.queue} n=${g.count} cpus=${g.sumCpus.toFixed(6)} gpus=${g.sumGpus.toFixed(6)}`)
    .sort();
}

describe.each(DB_KINDS)('what active jobs hold, from the deltas, on %s', (kind) => {
  const t = useDatabase(kind, `held-deltas-${kind}`);

  it('equals the aggregate over the active jobs through submits, status, CPU and queue changes, deletes and folds; the lines come from the PENDING jobs', async () => {
    const { prisma, store } = t;
    const ids: number[] = [];
    for (let i = 0; i < 16; i++) ids.push((await submitJob(store, { ...newJob(`h${i}`), cpus: [0.1, 0.2, 1.5, 2][i % 4] })).id);
    await prisma.job.updateMany({ where: { id: { in: ids.slice(0, 4) } }, data: { executor: 'slurm', gpus: 0.5 } });
    await prisma.job.updateMany({ where: { id: { in: ids.slice(2, 8) } }, data: { queue: 'gpu' } });
    await prisma.job.updateMany({ where: { id: { in: ids.slice(0, 10) } }, data: { status: 'RUNNING' } });
    await prisma.job.update({ where: { id: ids[10] }, data: { status: 'STARTING' } });
    expect(await heldByDeltas(store)).toEqual(await heldByAggregate(prisma));
    // An active job's CPUs and queue change; some end, one is deleted while running.
    await prisma.job.update({ where: { id: ids[1] }, data: { cpus: 3, queue: 'default' } });
    await prisma.job.updateMany({ where: { id: { in: ids.slice(3, 6) } }, data: { status: 'SUCCEEDED' } });
    await prisma.job.deleteMany({ where: { id: { in: [ids[7], ids[12]] } } });
    expect(await heldByDeltas(store)).toEqual(await heldByAggregate(prisma));
    // The lines: PENDING jobs only, without a cancel request or a dependency to wait for.
    await prisma.job.update({ where: { id: ids[13] }, data: { cancelRequestedAt: new Date() } });
    const lines = (await queueGroups(store)).filter((g) => g.status === 'PENDING');
    const pending = await prisma.job.findMany({ where: { status: 'PENDING', cancelRequestedAt: null, depsWaiting: false } });
    expect(lines.reduce((n, g) => n + g.count, 0)).toBe(pending.length);
    expect(Math.min(...lines.map((g) => g.minCpus))).toBe(Math.min(...pending.map((j) => j.cpus)));
    // Past FOLD_ABOVE rows a read folds them (through the callback) and stays exact.
    for (let i = 0; i < FOLD_ABOVE / 2 + 5; i++) await prisma.job.update({ where: { id: ids[i % 3] }, data: { status: i % 2 ? 'RUNNING' : 'CANCELLING' } });
    expect(await deltaRows(prisma)).toBeGreaterThan(FOLD_ABOVE);
    const want = await heldByAggregate(prisma);
    expect(await heldByDeltas(store, () => foldStatusDeltas(store))).toEqual(want);
    expect(await deltaRows(prisma)).toBeLessThan(20);
    expect(await heldByDeltas(store)).toEqual(want);
    expect(await allJobStatusCounts(store)).toEqual(await counted(prisma));
  });
});

describe.each(DB_KINDS)('upgrade to job status counts (%s)', (kind) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  const open = () => openEmptyRawSql(kind, 'upgrade-counts', cleanups);


  it('counts the jobs that were there before', async () => {
    const sql = await open();
    const all = readMigrations();
    await migrate(sql, all.filter((m) => m.name < COUNTS_MIGRATION));
    for (const [name, status] of [['a', 'PENDING'], ['b', 'FAILED'], ['c', 'FAILED'], ['d', 'SUCCEEDED']]) {
      await sql.query(`INSERT INTO "Job" ("name", "specYaml", "spec", "specHash", "status") VALUES ($1, 'run: echo', '{}'::jsonb, 'h', $2::"JobStatus")`, [name, status]);
    }
    expect((await migrate(sql, all)).applied[0]).toBe(COUNTS_MIGRATION);
    const rows = await sql.query<{ status: string; n: string | number }>(`SELECT "status"::text AS "status", sum("n") AS "n" FROM "JobStatusDelta" GROUP BY "status" ORDER BY "status"`);
    expect(rows.map((r) => [r.status, Number(r.n)])).toEqual([
      ['FAILED', 2],
      ['PENDING', 1],
      ['SUCCEEDED', 1],
    ]);
  });

  it('holds what the active jobs that were there before hold', async () => {
    const sql = await open();
    const all = readMigrations();
    await migrate(sql, all.filter((m) => m.name < HELD_MIGRATION));
    for (const [name, status, cpus] of [['a', 'RUNNING', 2], ['b', 'RUNNING', 0.5], ['c', 'FAILED', 4], ['d', 'PENDING', 1]] as const) {
      await sql.query(`INSERT INTO "Job" ("name", "specYaml", "spec", "specHash", "status", "cpus") VALUES ($1, 'run: echo', '{}'::jsonb, 'h', $2::"JobStatus", $3)`, [name, status, cpus]);
    }
    expect((await migrate(sql, all)).applied[0]).toBe(HELD_MIGRATION);
    await sql.query(`UPDATE "Job" SET "status" = 'RUNNING' WHERE "name" = 'd'`);
    const rows = await sql.query<{ status: string; n: string | number; cpus: number }>(`SELECT "status"::text AS "status", sum("n") AS "n", sum("cpus")::float8 AS "cpus" FROM "JobStatusDelta" GROUP BY "status" HAVING sum("n") <> 0 ORDER BY "status"`);
    expect(rows.map((r) => [r.status, Number(r.n), Number(r.cpus)])).toEqual([
      ['FAILED', 1, 4],
      ['RUNNING', 3, 3.5],
    ]);
  });
});
