/**
 * Measure — exit → status latency for a subscriber on a server that does NOT own the job
 * (docs/design.md "Replicas", "Events from any server"). Two servers on one fresh PostgreSQL
 * database and one data folder: every job is submitted to server A and followed on
 * `/ws/jobs/:id` of server B. The claim rule spreads the jobs over both servers, so each sample
 * is classed by the job's owner afterwards: owned by A, its terminal status reached B only
 * through LISTEN/NOTIFY (the non-owner figure); owned by B, B's subscriber was on the owner.
 * Latency = arrival at the subscriber − the `endedAtMs` the attempt's wrapper recorded in its
 * exit file (same machine, same clock). Same run, for reference: one server on another fresh
 * database. Jobs: `sleep 0.3–1.3; exit 0|1`, 4 in flight, capacity check off. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { attemptDir } from '../lib/jobs/paths';
import { isTerminal } from '../lib/jobs/status';
import type { BenchContext, Measure, MeasureResult } from './lib/context';
import { openJobStream, submitCmd } from './lib/client';
import { createPgDatabase } from './lib/pg';
import { startBenchServer, type BenchServer } from './lib/server';
import { dist, fmtMs, pool, round, sleep, type Dist } from './lib/util';

interface Sample {
  id: number;
  ms: number | null;
  problem?: string;
}

function endedAt(home: string, id: number): number | null {
  try {
    const rec = JSON.parse(readFileSync(path.join(attemptDir(id, 0, 1, home), 'exit'), 'utf8')) as { endedAtMs?: number };
    return typeof rec.endedAtMs === 'number' ? rec.endedAtMs : null;
  } catch {
    return null;
  }
}

/** Submits job `i` to `owner`, follows it on `watcher` until its terminal status. */
async function measure(owner: BenchServer, watcher: BenchServer, i: number, name: string): Promise<Sample> {
  const sleepS = (0.3 + ((i * 0.6180339887) % 1)).toFixed(3);
  const { id } = await submitCmd(owner, `sleep ${sleepS}; exit ${i % 2}`, { name });
  let at: number | null = null;
  let problem: string | undefined;
  const js = openJobStream(watcher, id, '', {
    onMessage: (msg, t) => {
      if (msg.type === 'hello' && isTerminal('job', msg.job.status)) problem = 'job was terminal before the subscriber connected';
      if (msg.type === 'job' && isTerminal('job', msg.status) && at === null) at = t;
    },
  });
  const closed = await Promise.race([js.closed, sleep(60_000).then(() => null)]);
  if (!closed) {
    js.close();
    problem ??= 'no terminal status within 60 s';
  }
  const end = endedAt(owner.home, id);
  return { id, ms: at !== null && end !== null ? at - end : null, problem };
}

async function serverId(s: BenchServer): Promise<string | null> {
  const m = await s.json<{ servers?: Array<{ id: string; self: boolean }> }>('/api/monitor');
  return m.servers?.find((x) => x.self)?.id ?? null;
}

/**
 * One run. With two servers, jobs are split by the claim rule (each takes its fair share), so
 * each sample is classed by its owner read afterwards: owned by A = followed on a non-owner.
 */
async function run(ctx: BenchContext, label: string, servers: 1 | 2, jobs: number, inFlight: number): Promise<{ nonOwner: Dist; owner: Dist; samples: Sample[]; nonOwnerN: number; missed: number }> {
  const db = await createPgDatabase(ctx.pgUrl, label);
  const env = { DATABASE_URL: db.url, JOBDECK_CAPACITY_CHECK: '0' };
  const a = await startBenchServer({ label: `${label}-a`, env });
  const b = servers === 2 ? await startBenchServer({ label: `${label}-b`, env, home: a.home, token: a.token }) : a;
  try {
    // Warm-up (not counted).
    await pool(inFlight * 2, inFlight, (i) => measure(a, b, i, `warmup-${i}`));
    const samples = await pool(jobs, inFlight, (i) => measure(a, b, i, `replica-${i}`));
    const idB = servers === 2 ? await serverId(b) : null;
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    let owners: Map<number, string | null>;
    try {
      const r = await c.query<{ id: number; ownerId: string | null }>(`SELECT "id", "ownerId" FROM "Job" WHERE "id" = ANY($1::int[])`, [samples.map((s) => s.id)]);
      owners = new Map(r.rows.map((x) => [Number(x.id), x.ownerId]));
    } finally {
      await c.end();
    }
    // Followed on B: B does not own it when its owner is another server.
    const onNonOwner = (s: Sample) => servers === 2 && owners.get(s.id) !== idB;
    const ms = (f: (s: Sample) => boolean) => samples.filter(f).map((s) => s.ms).filter((v): v is number => v !== null);
    const nonOwner = ms(onNonOwner);
    return { nonOwner: dist(nonOwner), owner: dist(ms((s) => !onNonOwner(s))), samples, nonOwnerN: nonOwner.length, missed: samples.filter((s) => s.ms === null).length };
  } finally {
    if (b !== a) await b.stop();
    await a.stop();
    await db.drop();
  }
}

export const replicas: Measure = {
  name: 'replicas',
  title: 'Exit → status latency on a server that does not own the job',
  async run(ctx): Promise<MeasureResult> {
    const jobs = ctx.quick ? 40 : 200;
    const inFlight = 4;
    ctx.log(`replicas: ${jobs} jobs, ${inFlight} in flight, submitted to server A, followed on server B…`);
    const two = await run(ctx, 'replicas-two', 2, jobs, inFlight);
    ctx.log('replicas: same with one server (the subscriber on the owner)…');
    const one = await run(ctx, 'replicas-one', 1, jobs, inFlight);
    const notes: string[] = [];
    for (const [l, r] of [['two servers', two], ['one server', one]] as const) {
      if (r.missed) notes.push(`${l}: ${r.missed} of ${jobs} jobs without a measured latency (${[...new Set(r.samples.map((s) => s.problem).filter(Boolean))].slice(0, 3).join('; ')})`);
    }
    const r1 = (d: Dist) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, round(v, 1)]));
    return {
      rows: [
        { metric: 'p50 exit → stream on a non-owner server', value: fmtMs(two.nonOwner.p50), target: '< 50 ms', pass: two.nonOwner.p50 < 50 },
        { metric: 'p99 exit → stream on a non-owner server', value: fmtMs(two.nonOwner.p99), target: '< 250 ms', pass: two.nonOwner.p99 < 250 },
        { metric: 'two servers, subscriber on the owner p50 / p99', value: `${fmtMs(two.owner.p50)} / ${fmtMs(two.owner.p99)}` },
        { metric: 'one server p50 / p99, same run', value: `${fmtMs(one.owner.p50)} / ${fmtMs(one.owner.p99)}` },
        { metric: 'jobs followed on a non-owner', value: `${two.nonOwnerN} of ${jobs}` },
      ],
      data: {
        jobs,
        inFlight,
        job: 'sleep 0.3–1.3 (evenly spread); exit (i % 2)',
        twoServers: { nonOwnerMs: r1(two.nonOwner), ownerMs: r1(two.owner), nonOwner: two.nonOwnerN, missed: two.missed },
        oneServer: { ms: r1(one.owner), missed: one.missed },
      },
      notes,
    };
  },
};
