/**
 * Measure "scale" — search at a million jobs. Jobs are seeded straight into the database as a
 * submit stores them (bench/list.ts seedSql: the job row with its spec and YAML, one task, one
 * attempt; submitted 10 s apart; ten of them named `bench-rare-needle-<id>`), then the list's
 * query path (lib/store listJobRows, which GET /api/jobs and `jobdeck queue` use) is timed in this
 * process against the database: no HTTP, so the numbers are the database's and the store's
 * (bench/list.ts measures the same pages through a server).
 *
 * Queries (page size 50): the first page; a deep page (keyset cursor near the oldest job); a
 * name search that matches nothing; one that matches exactly 10 jobs; a status + one-day
 * submitted-time range in the middle of the history; metadata filters (jsonb `@>` from the GIN
 * index) matching nothing, one job, a quarter of the jobs, and two pairs matching nothing; and,
 * the owner filter (a fifth of the jobs), alone and with status + the one-day range; the status
 * counts of the whole table (what the dashboard asks on every list view); and, for information,
 * the status counts of the 10-row search and of the one-job metadata filter.
 * Each: 5 warm-ups, then 50 timed runs.
 *
 * Then the same queries through a server (GET /api/jobs, `/api/jobs/counts`) on the same
 * database: request sent → body read at the client, 5 warm-ups + 50 timed.
 *
 * Size: 100,000 jobs (10,000 with --quick); `--scale-jobs=1000000` for the million.
 */
import path from 'node:path';
import { openDatabase, type Database } from '../lib/db/client';
import { encodeCursor } from '../lib/api/cursor';
import { createStore, jobStatusCounts, listJobRows, type ListJobsOptions } from '../lib/store';
import type { BenchContext, Measure, MeasureResult, Row } from './lib/context';
import { tempDir } from './lib/cleanup';
import { createPgDatabase } from './lib/pg';
import { seedSql } from './list';
import { dist, fmtMs, nowMs, round, type Dist } from './lib/util';
import { startBenchServer } from './lib/server';
import type { JobList } from '../lib/api/types';

/** Seconds between two seeded jobs' submissions (bench/list.ts seedSql). */
const SPACING_S = 10;

interface QueryResult {
  query: string;
  ms: Dist;
  rows: number;
  info?: boolean;
}

async function timeQuery(query: string, reps: number, run: () => Promise<number>, info = false): Promise<QueryResult> {
  for (let i = 0; i < 5; i++) await run();
  const ms: number[] = [];
  let rows = 0;
  for (let i = 0; i < reps; i++) {
    const t0 = nowMs();
    rows = await run();
    ms.push(nowMs() - t0);
  }
  return { query, ms: dist(ms), rows, ...(info ? { info } : {}) };
}

async function queries(db: Database, n: number, reps: number): Promise<QueryResult[]> {
  const store = createStore(db.prisma);
  const page = async (o: ListJobsOptions) => (await listJobRows(store, { limit: 50, ...o })).jobs.length;
  // A one-day window in the middle of the history: job ids (n/2 − 8640, n/2], about 1,700 FAILED.
  const end = new Date(Date.now() - (n / 2) * SPACING_S * 1000);
  const start = new Date(end.getTime() - 86_400_000);
  const out: QueryResult[] = [];
  out.push(await timeQuery('first page', reps, () => page({})));
  out.push(await timeQuery('deep page (cursor near the oldest)', reps, () => page({ beforeId: 60 })));
  out.push(await timeQuery('q=nomatch (matches nothing)', reps, () => page({ q: 'nomatch' })));
  out.push(await timeQuery('q=rare-needle (matches 10)', reps, () => page({ q: 'rare-needle' })));
  out.push(await timeQuery('status=FAILED + a one-day submitted range', reps, () => page({ status: ['FAILED'], submittedAfter: start, submittedBefore: end })));
  // Seeded metadata (bench/list.ts seedSql): team one of four, run "r<id>" one job each.
  out.push(await timeQuery('metadata team:nomatch (matches nothing)', reps, () => page({ metadata: [['team', 'nomatch']] })));
  out.push(await timeQuery('metadata run:r<n/2> (matches 1)', reps, () => page({ metadata: [['run', `r${n / 2}`]] })));
  out.push(await timeQuery('metadata team:vision (a quarter of the jobs)', reps, () => page({ metadata: [['team', 'vision']] })));
  out.push(await timeQuery('metadata team:nlp + run:r<n/2> (matches nothing)', reps, () => page({ metadata: [['team', 'nlp'], ['run', `r${n / 2}`]] })));
  // Owners (bench/list.ts seedSql): five users, a fifth of the jobs each.
  out.push(await timeQuery('owner (a fifth of the jobs)', reps, () => page({ userId: 3 })));
  // User 4 owns ids ≡ 2 (mod 5): half of them are FAILED (ids ≡ 7 mod 10), about 170 in the day.
  out.push(await timeQuery('owner + status=FAILED + a one-day submitted range', reps, () => page({ userId: 4, status: ['FAILED'], submittedAfter: start, submittedBefore: end })));
  // What the dashboard asks on every list view: the counts by status of the whole table.
  out.push(await timeQuery('counts, unfiltered', reps, async () => (await jobStatusCounts(store, {})).total));
  out.push(await timeQuery('counts of q=rare-needle', reps, async () => (await jobStatusCounts(store, { q: 'rare-needle' })).total, true));
  out.push(await timeQuery('counts of metadata run:r<n/2>', reps, async () => (await jobStatusCounts(store, { metadata: [['run', `r${n / 2}`]] })).total, true));
  return out;
}

/** The same queries as GET /api/jobs (and the counts) through a server on the seeded database. */
async function httpQueries(ctx: BenchContext, label: string, home: string, env: Record<string, string>, n: number, reps: number): Promise<QueryResult[]> {
  const s = await startBenchServer({ label, home, env, profile: ctx.profile });
  try {
    const end = new Date(Date.now() - (n / 2) * SPACING_S * 1000);
    const start = new Date(end.getTime() - 86_400_000);
    const get = (url: string) => async () => ((await s.json<JobList & { total?: number }>(url)) as JobList).jobs?.length ?? 0;
    const counts = (url: string) => async () => (await s.json<{ total: number }>(url)).total;
    const range = `status=FAILED&submittedAfter=${start.toISOString()}&submittedBefore=${end.toISOString()}`;
    return [
      await timeQuery('HTTP first page', reps, get('/api/jobs')),
      await timeQuery('HTTP deep page (cursor near the oldest)', reps, get(`/api/jobs?cursor=${encodeCursor(60)}`)),
      await timeQuery('HTTP q=nomatch', reps, get('/api/jobs?q=nomatch')),
      await timeQuery('HTTP q=rare-needle (10)', reps, get('/api/jobs?q=rare-needle')),
      await timeQuery('HTTP status=FAILED + one-day range', reps, get(`/api/jobs?${range}`)),
      await timeQuery('HTTP metadata=team:nomatch', reps, get('/api/jobs?metadata=team:nomatch')),
      await timeQuery('HTTP metadata=run:r<n/2> (1)', reps, get(`/api/jobs?metadata=run:r${n / 2}`)),
      await timeQuery('HTTP owner=bench-user-2', reps, get('/api/jobs?owner=bench-user-2')),
      await timeQuery('HTTP counts, unfiltered', reps, counts('/api/jobs/counts')),
      await timeQuery('HTTP counts of q=nomatch', reps, counts('/api/jobs/counts?q=nomatch'), true),
    ];
  } finally {
    await s.stop();
  }
}

async function measureOne(ctx: BenchContext, kind: 'pglite' | 'postgresql', n: number, reps: number) {
  const home = tempDir(`scale-${n}`);
  const opts = kind === 'postgresql' ? { databaseUrl: (await createPgDatabase(ctx.pgUrl, `scale${n}`)).url } : { pgliteDir: path.join(home, 'db') };
  const t0 = nowMs();
  let db = await openDatabase(opts);
  for (const sql of seedSql(n, 10)) await db.prisma.$executeRawUnsafe(sql);
  const seedMs = nowMs() - t0;
  // Reopened, as a server would find it: PGlite's caches start cold.
  await db.close();
  db = await openDatabase(opts);
  ctx.log(`scale: ${kind} ${n.toLocaleString('en-US')} jobs seeded in ${fmtMs(seedMs)}; timing queries…`);
  try {
    const results = await queries(db, n, reps);
    const wrong = results.find((r) => (r.query.includes('matches 10') && r.rows !== 10) || (r.query.includes('matches 1)') && r.rows !== 1) || (r.query.includes('matches nothing') && r.rows !== 0));
    if (wrong) throw new Error(`scale: ${wrong.query} found ${wrong.rows} jobs`);
    await db.close();
    const env: Record<string, string> = opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl } : {};
    results.push(...(await httpQueries(ctx, `scale-${kind}-${n}`, home, env, n, reps)));
    return { kind, n, seedMs: round(seedMs), results };
  } finally {
    await db.close().catch(() => undefined);
  }
}

export const scale: Measure = {
  name: 'scale',
  title: 'Search at scale',
  async run(ctx): Promise<MeasureResult> {
    const n = ctx.scaleJobs ?? (ctx.quick ? 10_000 : 100_000);
    const reps = 50;
    const runs = [];
    for (const kind of ['pglite', 'postgresql'] as const) runs.push(await measureOne(ctx, kind, n, reps));
    const rows: Row[] = [];
    for (const r of runs) {
      const size = r.n.toLocaleString('en-US');
      rows.push({ metric: `${r.kind} ${size}: seeding (jobs, tasks, attempts, indexes)`, value: fmtMs(r.seedMs) });
      for (const q of r.results) {
        const target = q.info ? undefined : '< 50 ms';
        rows.push({ metric: `${r.kind} ${size}: ${q.query} p50 (p95)`, value: `${fmtMs(q.ms.p50)} (${fmtMs(q.ms.p95)}); ${q.rows} rows`, target, pass: q.info ? null : q.ms.p95 < 50 });
      }
    }
    const roundDist = (d: Dist) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, round(v, 2)]));
    return {
      rows,
      data: { reps, runs: runs.map((r) => ({ ...r, results: r.results.map((q) => ({ ...q, ms: roundDist(q.ms) })) })) },
      notes: n < 1_000_000 ? [`${n.toLocaleString('en-US')} jobs; the target is at 1,000,000 (--scale-jobs=1000000)`] : [],
    };
  },
};
