/**
 * Measure 9 — replicas (docs/design.md "Replicas"). Two servers on one fresh PostgreSQL database
 * and one data folder.
 *
 * Latency: jobs of `sleep 0.3–1.3; exit 0|1` (as the latency measure), 4 in flight, submitted to
 * the two servers in turn; every job has a `/ws/jobs/:id` subscriber on EACH server, opened right
 * after the submit. Which server owns the job is read from the database afterwards (Job.ownerId →
 * Server.pid), so each job gives one sample for a subscriber on its owner and one for a
 * subscriber on the other server, whose event came over LISTEN/NOTIFY. Latency = arrival of the
 * terminal `job` message − the `endedAtMs` the attempt's wrapper wrote.
 *
 * Submits: `POST /api/jobs {"cmd":"true"}` by 16 clients, first against one server alone, then
 * spread over two servers (8 clients each) on another fresh database, same run; the jobs stay
 * PENDING (JOBDECK_CPUS=1 held by a sleep job on each database), as in the submit measure.
 */
import pg from 'pg';
import { isTerminal } from '../lib/jobs/status';
import type { Measure, MeasureResult } from './lib/context';
import { openJobStream, SubmitClient, submitCmd } from './lib/client';
import { cancelEverything, waitAllStatus } from './lib/jobs';
import { createPgDatabase } from './lib/pg';
import { startBenchServer, type BenchServer } from './lib/server';
import { readEndedAt } from './latency';
import { dist, fmtMs, nowMs, pool, round, sleep, type Dist } from './lib/util';

const LEASE_MS = '10000';

/** Arrival of the job's terminal status on one server's job stream (ms, this clock), or null after 60 s. */
function terminalArrival(server: BenchServer, id: number): Promise<number | null> {
  return new Promise((resolve) => {
    let at: number | null = null;
    const js = openJobStream(server, id, '', {
      onMessage: (msg, t) => {
        if (msg.type === 'job' && isTerminal('job', msg.status) && at === null) at = t;
      },
    });
    void Promise.race([js.closed, sleep(60_000)]).then(() => {
      js.close();
      resolve(at);
    });
  });
}

async function twoServers(label: string, url: string, env: Record<string, string> = {}): Promise<[BenchServer, BenchServer]> {
  const common = { DATABASE_URL: url, JOBDECK_LEASE_MS: LEASE_MS, ...env };
  const a = await startBenchServer({ label: `${label}-a`, env: common });
  const b = await startBenchServer({ label: `${label}-b`, env: common, home: a.home, token: a.token });
  return [a, b];
}

interface Sample {
  id: number;
  ownerPid: number | null;
  ownerMs: number | null;
  otherMs: number | null;
}

async function latencyRun(ctx: Parameters<Measure['run']>[0], jobs: number): Promise<{ owner: Dist; other: Dist; samples: Sample[]; unowned: number }> {
  const db = await createPgDatabase(ctx.pgUrl, 'replicas_latency');
  const servers = await twoServers('replicas-latency', db.url, { JOBDECK_CAPACITY_CHECK: '0' });
  const raw: Array<{ id: number; endedAtMs: number | null; at: Map<number, number | null> }> = [];
  const one = async (i: number, counted: boolean) => {
    const sleepS = (0.3 + ((i * 0.6180339887) % 1)).toFixed(3);
    const { id } = await submitCmd(servers[i % 2], `sleep ${sleepS}; exit ${i % 2}`, { name: counted ? `replica-latency-${i}` : `warmup-${i}` });
    const [a, b] = await Promise.all(servers.map((s) => terminalArrival(s, id)));
    if (counted) raw.push({ id, endedAtMs: readEndedAt(servers[0].home, id), at: new Map([[servers[0].pid, a], [servers[1].pid, b]]) });
  };
  await pool(8, 4, (i) => one(i, false));
  await pool(jobs, 4, (i) => one(i, true));
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  const owners = new Map<number, number>();
  try {
    const r = await c.query<{ id: number; pid: number }>('SELECT j."id", s."pid" FROM "Job" j JOIN "Server" s ON s."id" = j."ownerId" WHERE j."id" = ANY($1::int[])', [raw.map((x) => x.id)]);
    for (const row of r.rows) owners.set(row.id, row.pid);
  } finally {
    await c.end();
  }
  for (const s of servers) await s.stop();
  const samples: Sample[] = raw.map((x) => {
    const ownerPid = owners.get(x.id) ?? null;
    const otherPid = servers.find((s) => s.pid !== ownerPid)!.pid;
    const rel = (t: number | null | undefined) => (t != null && x.endedAtMs !== null && ownerPid !== null ? t - x.endedAtMs : null);
    return { id: x.id, ownerPid, ownerMs: rel(ownerPid === null ? null : x.at.get(ownerPid)), otherMs: rel(x.at.get(otherPid)) };
  });
  const pick = (k: 'ownerMs' | 'otherMs') => dist(samples.map((s) => s[k]).filter((v): v is number => v !== null));
  return { owner: pick('ownerMs'), other: pick('otherMs'), samples, unowned: samples.filter((s) => s.ownerPid === null).length };
}

/** `n` submits of `true` through 16 clients spread over `servers`; jobs/s. */
async function submitRate(servers: BenchServer[], n: number): Promise<{ rate: number; errors: number }> {
  const blocker = await submitCmd(servers[0], 'sleep 3600', { name: 'blocker' });
  await waitAllStatus(servers[0], null, [blocker.id], 'RUNNING', 30_000, 200);
  const clients = servers.map((s) => new SubmitClient(s, 16 / servers.length));
  await pool(50, 16, (i) => clients[i % clients.length].submit('true', { name: `warmup-${i}` }));
  let errors = 0;
  const t0 = nowMs();
  await pool(n, 16, async (i) => {
    try {
      await clients[i % clients.length].submit('true', { name: `submit-${i}` });
    } catch {
      errors++;
    }
  });
  const wall = nowMs() - t0;
  for (const c of clients) c.close();
  await cancelEverything(servers[0], 60_000);
  for (const s of servers) await s.stop();
  return { rate: round((n - errors) / (wall / 1000), 1), errors };
}

export const replicas: Measure = {
  name: 'replicas',
  title: 'Two servers on one PostgreSQL',
  async run(ctx): Promise<MeasureResult> {
    const jobs = ctx.quick ? 40 : 200;
    ctx.log(`replicas: ${jobs} jobs, a subscriber on each of two servers…`);
    const lat = await latencyRun(ctx, jobs);
    const n = ctx.quick ? 300 : 2000;
    ctx.log(`replicas: ${n} submits to one server, then to two…`);
    const oneDb = await createPgDatabase(ctx.pgUrl, 'replicas_submit1');
    const single = await submitRate([await startBenchServer({ label: 'replicas-submit-one', env: { DATABASE_URL: oneDb.url, JOBDECK_LEASE_MS: LEASE_MS, JOBDECK_CPUS: '1' } })], n);
    const twoDb = await createPgDatabase(ctx.pgUrl, 'replicas_submit2');
    const double = await submitRate(await twoServers('replicas-submit-two', twoDb.url, { JOBDECK_CPUS: '1' }), n);
    const ratio = double.rate / single.rate;
    const notes: string[] = [];
    if (lat.unowned) notes.push(`${lat.unowned} jobs had no owner when read (not counted)`);
    if (single.errors + double.errors) notes.push(`${single.errors + double.errors} submits failed`);
    return {
      rows: [
        { metric: 'p50 exit → job stream, subscriber on the owner', value: fmtMs(lat.owner.p50), target: '< 20 ms', pass: lat.owner.p50 < 20 },
        { metric: 'p99 exit → job stream, subscriber on the owner', value: fmtMs(lat.owner.p99), target: '< 100 ms', pass: lat.owner.p99 < 100 },
        { metric: 'p50 exit → job stream, subscriber on the other server', value: fmtMs(lat.other.p50), target: '< 20 ms', pass: lat.other.p50 < 20 },
        { metric: 'p99 exit → job stream, subscriber on the other server', value: fmtMs(lat.other.p99), target: '< 100 ms', pass: lat.other.p99 < 100 },
        { metric: 'submits/s: one server; two servers; ratio', value: `${single.rate}/s; ${double.rate}/s; ${ratio.toFixed(2)}×`, target: '≥ 1.6×', pass: ratio >= 1.6 },
      ],
      data: { jobs, leaseMs: Number(LEASE_MS), ownerMs: lat.owner, otherMs: lat.other, samples: lat.samples, submits: n, single, double, ratio: round(ratio, 2) },
      notes,
    };
  },
};
