/**
 * Measure 5 — list at scale. `GET /api/jobs` pages with 10,000 and 100,000 jobs seeded straight
 * into the database before the server starts (INSERT … SELECT generate_series: jobs with one task
 * and one attempt each, terminal statuses so the monitor leaves them alone). PGlite: the data
 * folder is opened in-process with lib/db/client.ts openDatabase (which migrates), seeded and
 * closed; PostgreSQL: a fresh database, migrated and seeded the same way, dropped after.
 *
 * Pages (default size 50), which the target is about: the first page; a deep page (cursor near
 * the oldest job); a middle page; a status-filtered deep page. For information: the first page
 * at limit=200, and name searches (`q`, one that matches 1 in 5 jobs, one that matches none).
 * Each: 5 warm-up requests, then 50 sequential requests timed at the client (request sent → body
 * read), and the server's CPU time per request (/proc).
 */
import path from 'node:path';
import { openDatabase } from '../lib/db/client';
import { encodeCursor } from '../lib/api/cursor';
import type { JobList } from '../lib/api/types';
import type { BenchContext, Measure, MeasureResult, Row } from './lib/context';
import { tempDir } from './lib/cleanup';
import { createPgDatabase } from './lib/pg';
import { startBenchServer, type BenchServer } from './lib/server';
import { cpuTimeMs } from './lib/proc';
import { dist, fmtMs, nowMs, round, type Dist } from './lib/util';

/** Users the seeded jobs belong to (`bench-user-1` … `-5`, ids 2–6: id 1 is a fresh database's admin). */
export const SEED_USERS = 5;

/**
 * SQL that seeds `n` terminal jobs (ids 1…n), one task and one attempt each, submitted 10 s
 * apart (job n now). With `needles`, that many jobs spread evenly over the ids are named
 * `bench-rare-needle-<id>` (a name search that matches exactly `needles` rows). Each job's
 * metadata is `{team: vision|nlp|infra|rl (id mod 4), run: "r<id>"}`; its owner is one of
 * SEED_USERS users (`bench-user-<1 + id mod 5>`, user id 2 + id mod 5).
 */
export function seedSql(n: number, needles = 0): string[] {
  const task = {
    name: null,
    setup: null,
    run: 'python train.py --epochs 3',
    envs: { STAGE: 'bench' },
    workdir: null,
    resources: { cpus: 1, cpusAtLeast: false, memoryGb: null, memoryAtLeast: false },
    jobRecovery: { maxRestartsOnErrors: 1, recoverOnExitCodes: [] },
  };
  const taskSpec = JSON.stringify(task).replace(/'/g, "''");
  // The job row as a submit stores it: the normalized pipeline (its tasks' specs) and the YAML.
  const jobSpec = JSON.stringify({ name: 'bench', tasks: [task] }).replace(/'/g, "''");
  const specYaml = 'name: bench\nenvs:\n  STAGE: bench\nresources:\n  cpus: 1\njob_recovery:\n  max_restarts_on_errors: 1\nrun: python train.py --epochs 3\n';
  const status = `(CASE WHEN g % 10 < 7 THEN 'SUCCEEDED' WHEN g % 10 < 9 THEN 'FAILED' ELSE 'CANCELLED' END)`;
  const every = needles > 0 ? Math.max(1, Math.floor(n / needles)) : 0;
  const base = `(ARRAY['train','eval','nightly','etl','report'])[1 + g % 5]`;
  // Client metadata as Ray's clients send it: a team (one of four) and a run id of its own.
  const metadata = `jsonb_build_object('team', (ARRAY['vision','nlp','infra','rl'])[1 + g % 4], 'run', 'r' || g)`;
  // resources.labels as the submit stores them (one map per task): a team and a run id of its own.
  const labels = `jsonb_build_array(jsonb_build_object('team', (ARRAY['vision','nlp','infra','rl'])[1 + g % 4], 'run-id', 'r' || g))`;
  const name = `('bench-' || ${every ? `CASE WHEN g % ${every} = 0 AND g / ${every} <= ${needles} THEN 'rare-needle' ELSE ${base} END` : base} || '-' || g)`;
  return [
    `INSERT INTO "User" ("id","name","role") SELECT 1 + u, 'bench-user-' || u, 'member' FROM generate_series(1, ${SEED_USERS}) AS u`,
    `SELECT setval(pg_get_serial_sequence('"User"', 'id'), ${1 + SEED_USERS})`,
    `INSERT INTO "Job" ("id","name","status","statusReason","specYaml","spec","specHash","cpus","metadata","labels","userId","submittedAt","startedAt","endedAt","updatedAt","taskCount","currentTask")
     SELECT g, ${name}, ${status}::"JobStatus", NULL, E'${specYaml.replace(/\n/g, '\\n')}', '${jobSpec}'::jsonb, md5(g::text), 1, ${metadata}, ${labels}, 2 + g % ${SEED_USERS},
            now() - (${n} - g) * interval '10 seconds', now() - (${n} - g) * interval '10 seconds' + interval '1 second',
            now() - (${n} - g) * interval '10 seconds' + interval '9 seconds', now(), 1, 0
     FROM generate_series(1, ${n}) AS g`,
    `INSERT INTO "Task" ("id","jobId","index","name","status","spec","exitCode","startedAt","endedAt")
     SELECT g, g, 0, NULL, ${status}::text::"TaskStatus", '${taskSpec}'::jsonb, CASE WHEN g % 10 < 7 THEN 0 ELSE 1 END,
            now() - (${n} - g) * interval '10 seconds' + interval '1 second', now() - (${n} - g) * interval '10 seconds' + interval '9 seconds'
     FROM generate_series(1, ${n}) AS g`,
    `INSERT INTO "Attempt" ("id","jobId","taskId","number","status","cause","executor","exitCode","createdAt","startedAt","endedAt")
     SELECT g, g, g, 1, (CASE WHEN g % 10 < 7 THEN 'SUCCEEDED' WHEN g % 10 < 9 THEN 'FAILED' ELSE 'CANCELLED' END)::"AttemptStatus", 'first', 'local',
            CASE WHEN g % 10 < 7 THEN 0 ELSE 1 END, now() - (${n} - g) * interval '10 seconds', now() - (${n} - g) * interval '10 seconds' + interval '1 second',
            now() - (${n} - g) * interval '10 seconds' + interval '9 seconds'
     FROM generate_series(1, ${n}) AS g`,
    `SELECT setval(pg_get_serial_sequence('"Job"', 'id'), ${n})`,
    `SELECT setval(pg_get_serial_sequence('"Task"', 'id'), ${n})`,
    `SELECT setval(pg_get_serial_sequence('"Attempt"', 'id'), ${n})`,
    `ANALYZE`,
  ];
}

async function seed(opts: { pgliteDir?: string; databaseUrl?: string }, n: number): Promise<number> {
  const t0 = nowMs();
  const db = await openDatabase(opts);
  try {
    for (const sql of seedSql(n)) await db.prisma.$executeRawUnsafe(sql);
  } finally {
    await db.close();
  }
  return nowMs() - t0;
}

interface PageResult {
  page: string;
  query: string;
  ms: Dist;
  jobs: number;
  /** Server CPU time per request (ms, /proc utime+stime over the timed requests). */
  cpuMs: number;
  /** Information only (name searches, the 200-job page): the target is about default-size pages. */
  info?: boolean;
}

async function timePage(s: BenchServer, page: string, query: string, reps: number, info = false): Promise<PageResult> {
  const url = `/api/jobs${query ? `?${query}` : ''}`;
  let jobs = 0;
  for (let i = 0; i < 5; i++) await s.json<JobList>(url);
  const ms: number[] = [];
  const c0 = cpuTimeMs(s.pid)!;
  for (let i = 0; i < reps; i++) {
    const t0 = nowMs();
    const body = await s.json<JobList>(url);
    ms.push(nowMs() - t0);
    jobs = body.jobs.length;
  }
  const cpuMs = (cpuTimeMs(s.pid)! - c0) / reps;
  return { page, query, ms: dist(ms), jobs, cpuMs: round(cpuMs, 2), ...(info ? { info } : {}) };
}

async function measureOne(ctx: BenchContext, kind: 'pglite' | 'postgresql', n: number, reps: number) {
  const home = tempDir(`list-${kind}-${n}`);
  const env: Record<string, string> = {};
  let seedMs: number;
  if (kind === 'postgresql') {
    const db = await createPgDatabase(ctx.pgUrl, `list${n}`);
    env.DATABASE_URL = db.url;
    seedMs = await seed({ databaseUrl: db.url }, n);
  } else {
    seedMs = await seed({ pgliteDir: path.join(home, 'db') }, n);
  }
  ctx.log(`list: ${kind} ${n} jobs seeded in ${fmtMs(seedMs)}; timing pages…`);
  const server = await startBenchServer({ label: `list-${kind}-${n}`, home, env, profile: ctx.profile });
  const pages: PageResult[] = [];
  const { profile } = await server.profileWindow('pages', async () => {
    pages.push(await timePage(server, 'first', '', reps));
    pages.push(await timePage(server, 'deep (cursor near the oldest)', `cursor=${encodeCursor(60)}`, reps));
    pages.push(await timePage(server, 'middle', `cursor=${encodeCursor(Math.floor(n / 2))}`, reps));
    pages.push(await timePage(server, 'status=CANCELLED, deep', `status=CANCELLED&cursor=${encodeCursor(Math.floor(n / 20))}`, reps));
    pages.push(await timePage(server, 'first, limit=200', 'limit=200', reps, true));
    pages.push(await timePage(server, 'q=nightly (name search, 1 in 5 match)', 'q=nightly', reps, true));
    pages.push(await timePage(server, 'q=nomatch (name search, full scan)', 'q=nomatch', reps, true));
  });
  await server.stop();
  return { kind, n, seedMs: round(seedMs), pages, profile };
}

export const list: Measure = {
  name: 'list',
  title: 'List at scale',
  async run(ctx): Promise<MeasureResult> {
    const sizes = ctx.quick ? [10_000] : [10_000, 100_000];
    const reps = 50;
    const runs = [];
    for (const kind of ['pglite', 'postgresql'] as const) for (const n of sizes) runs.push(await measureOne(ctx, kind, n, reps));
    const rows: Row[] = [];
    for (const r of runs) {
      const worst = r.pages.filter((p) => !p.info).reduce((a, b) => (b.ms.p95 > a.ms.p95 ? b : a));
      const info = r.pages.filter((p) => p.info);
      const first = r.pages[0];
      const deep = r.pages[1];
      const isTarget = r.n >= 100_000;
      rows.push({
        metric: `${r.kind} ${r.n.toLocaleString('en-US')}: first / deep page p50 (p95)`,
        value: `${fmtMs(first.ms.p50)} (${fmtMs(first.ms.p95)}) / ${fmtMs(deep.ms.p50)} (${fmtMs(deep.ms.p95)})`,
      });
      rows.push({
        metric: `${r.kind} ${r.n.toLocaleString('en-US')}: worst page p95 (${worst.page}); its server CPU/request`,
        value: `${fmtMs(worst.ms.p95)}; ${fmtMs(worst.cpuMs)}`,
        target: isTarget ? '< 50 ms' : undefined,
        pass: isTarget ? worst.ms.p95 < 50 : null,
      });
      rows.push({ metric: `${r.kind} ${r.n.toLocaleString('en-US')}: p95 limit=200 / q match / q no match`, value: info.map((p) => fmtMs(p.ms.p95)).join(' / ') });
    }
    const roundDist = (d: Dist) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, round(v, 2)]));
    return {
      rows,
      data: { reps, runs: runs.map((r) => ({ ...r, pages: r.pages.map((p) => ({ ...p, ms: roundDist(p.ms) })) })) },
      notes: ctx.quick ? ['quick: 10,000 jobs only (the target is at 100,000)'] : [],
    };
  },
};
