/**
 * Measure 7 — the admission pass at 10,000 PENDING jobs: FIFO (every job priority 500, the
 * default queue) against mixed priorities (100 / 500 / 900) in three queues (default; `gpu`
 * limited to 2 running and at its limit; `batch` limited to 4 CPUs), in the same run, on PGlite
 * and on PostgreSQL. The ratio mixed ÷ FIFO is the target (≤ 2×: priorities and queues must not
 * turn a pass into a scan of the queue).
 *
 * In-process: the data folder (or a fresh PostgreSQL database) is opened with lib/db/client.ts
 * openDatabase, seeded with INSERT … SELECT generate_series — 10,000 PENDING jobs of 1 CPU (none
 * near the start timeout) and 4 RUNNING ones holding the executor's 4 CPUs, the steady state of
 * a busy machine —, and a monitor built on it (createMonitor, not started: no reconcile, no process) runs passes with
 * admitNow(): 5 warm-up passes, then 40 timed ones. Nothing is admitted (the CPUs are taken), so
 * every pass reads and decides the same: the aggregate, the queue limits, the first page of the
 * line (and, mixed, one page of the queue at its limit), the reasons (written once, then
 * unchanged). The two scenarios alternate in 4 rounds (FIFO, mixed, FIFO, …) on one database
 * (UPDATE between them), so machine noise falls on both.
 */
import path from 'node:path';
import { openDatabase, type Database } from '../lib/db/client';
import { createLocalExecutor } from '../lib/executors/local/executor';
import { createMonitor } from '../lib/monitor/monitor';
import { createStore } from '../lib/store';
import type { BenchContext, Measure, MeasureResult, Row } from './lib/context';
import { tempDir } from './lib/cleanup';
import { createPgDatabase } from './lib/pg';
import { dist, fmtMs, nowMs, round, type Dist } from './lib/util';

const WARMUP = 5;
const ROUNDS = 4;

/** SQL seeding `n` PENDING jobs (ids 1…n) and 4 RUNNING holders of 1 CPU each (ids n+1…n+4). */
function seedSql(n: number): string[] {
  const spec = JSON.stringify({ name: 'bench', tasks: [{ run: 'true' }] });
  return [
    `INSERT INTO "Job" ("id","name","status","specYaml","spec","specHash","cpus","submittedAt","updatedAt","taskCount")
     SELECT g, 'wait-' || g, 'PENDING', 'run: "true"\n', '${spec}'::jsonb, md5(g::text), 1, now() - (${n} - g) * interval '10 milliseconds', now(), 1
     FROM generate_series(1, ${n}) AS g`,
    `INSERT INTO "Job" ("id","name","status","specYaml","spec","specHash","cpus","submittedAt","startedAt","updatedAt","taskCount")
     SELECT g, 'hold-' || g, 'RUNNING', 'run: "true"\n', '${spec}'::jsonb, md5(g::text), 1, now(), now(), now(), 1
     FROM generate_series(${n + 1}, ${n + 4}) AS g`,
    `SELECT setval(pg_get_serial_sequence('"Job"', 'id'), ${n + 4})`,
    `ANALYZE`,
  ];
}

/** SQL turning the seeded jobs into one scenario. */
function scenarioSql(kind: 'fifo' | 'mixed', n: number): string[] {
  if (kind === 'fifo') {
    return [`UPDATE "Job" SET "priority" = 500, "queue" = 'default', "pendingReason" = NULL`, `DELETE FROM "Queue"`, `ANALYZE "Job"`];
  }
  return [
    `UPDATE "Job" SET "priority" = (ARRAY[100, 500, 900])[1 + "id" % 3], "queue" = (ARRAY['default', 'gpu', 'batch'])[1 + ("id" / 7) % 3], "pendingReason" = NULL WHERE "id" <= ${n}`,
    // The holders: 2 in gpu (at its limit), 2 in the default queue.
    `UPDATE "Job" SET "priority" = 500, "queue" = CASE WHEN "id" <= ${n + 2} THEN 'gpu' ELSE 'default' END WHERE "id" > ${n}`,
    `INSERT INTO "Queue" ("name", "maxRunning", "maxCpus", "defaultPriority") VALUES ('gpu', 2, NULL, NULL), ('batch', NULL, 4, 700)`,
    `ANALYZE "Job"`,
  ];
}

interface KindResult {
  kind: string;
  fifo: Dist;
  mixed: Dist;
  ratio: number;
  seedMs: number;
}

async function passTimes(db: Database, home: string, n: number, passes: number): Promise<number[]> {
  const store = createStore(db.prisma);
  const m = createMonitor({ store, db: db.prisma, executor: createLocalExecutor({ cpus: 4 }), home, reconcileMs: 60_000 });
  for (let i = 0; i < WARMUP; i++) await m.admitNow();
  const out: number[] = [];
  for (let i = 0; i < passes; i++) {
    const t0 = nowMs();
    await m.admitNow();
    out.push(nowMs() - t0);
  }
  const st = m.state();
  // Every seeded job still waits: the passes decided nothing, as intended.
  if (st.jobsWaiting !== n) throw new Error(`admission bench: the last pass left ${st.jobsWaiting} jobs waiting, not ${n}`);
  return out;
}

async function measureKind(kind: 'pglite' | 'postgresql', n: number, passes: number, ctx: BenchContext): Promise<KindResult> {
  const home = tempDir(`admission-${kind}`);
  const url = kind === 'postgresql' ? (await createPgDatabase(ctx.pgUrl, 'admission')).url : undefined;
  const db = await openDatabase(url ? { databaseUrl: url } : { pgliteDir: path.join(home, 'db'), pgliteWorker: false });
  try {
    const t0 = nowMs();
    for (const sql of seedSql(n)) await db.prisma.$executeRawUnsafe(sql);
    const seedMs = nowMs() - t0;
    const times: Record<'fifo' | 'mixed', number[]> = { fifo: [], mixed: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of ['fifo', 'mixed'] as const) {
        for (const sql of scenarioSql(s, n)) await db.prisma.$executeRawUnsafe(sql);
        ctx.log(`admission: ${kind}: round ${r + 1}/${ROUNDS}, ${s}: ${passes} passes at ${n} PENDING…`);
        times[s].push(...(await passTimes(db, home, n, passes)));
      }
    }
    const fifo = dist(times.fifo);
    const mixed = dist(times.mixed);
    return { kind, fifo, mixed, ratio: mixed.p50 / fifo.p50, seedMs };
  } finally {
    await db.close();
  }
}

export const admission: Measure = {
  name: 'admission',
  title: 'Admission pass at 10,000 PENDING: mixed priorities and three queues vs FIFO',
  async run(ctx): Promise<MeasureResult> {
    const n = ctx.quick ? 2000 : 10_000;
    const passes = ctx.quick ? 5 : 10;
    const results: KindResult[] = [];
    for (const kind of ['pglite', 'postgresql'] as const) results.push(await measureKind(kind, n, passes, ctx));
    const rows: Row[] = [];
    for (const r of results) {
      rows.push({ metric: `${r.kind}: pass p50 FIFO (${n} PENDING)`, value: `${fmtMs(r.fifo.p50)} (p95 ${fmtMs(r.fifo.p95)})` });
      rows.push({ metric: `${r.kind}: pass p50 mixed priorities, 3 queues`, value: `${fmtMs(r.mixed.p50)} (p95 ${fmtMs(r.mixed.p95)})` });
      rows.push({ metric: `${r.kind}: mixed ÷ FIFO (p50)`, value: `${round(r.ratio, 2)}×`, target: '≤ 2×', pass: r.ratio <= 2 });
    }
    return { rows, data: { n, passes: passes * ROUNDS, results }, notes: [] };
  },
};
