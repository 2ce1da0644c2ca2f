/**
 * Measure 1 — exit → status latency. Jobs of `sleep 0.3–1.3; exit 0|1` (alternating); for each,
 * a WebSocket subscriber on `/ws/jobs/:id` opened right after the submit (long before the exit),
 * and one list-stream subscriber on `/ws/jobs` for all of them. Latency = arrival of the job's
 * terminal status at the subscriber − the `endedAtMs` the attempt's wrapper recorded in its own
 * exit file (`<attemptDir>/exit`, the process's own clock; same machine, same wall clock).
 *
 * Two servers, one after the other, in the same run: the normal one, and the baseline with the
 * monitor forced to pure 1 s polling (Ray's monitor loop): JOBDECK_RECONCILE_MS=1000 and
 * JOBDECK_EXIT_WATCH=0 (no executor.watch() exit notification).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { attemptDir } from '../lib/jobs/paths';
import { isTerminal } from '../lib/jobs/status';
import type { BenchContext, Measure, MeasureResult } from './lib/context';
import { jobDetail, openJobStream, openListStream, submitCmd, type ListStreamClient } from './lib/client';
import { startBenchServer, type BenchServer } from './lib/server';
import type { ProfileSummary } from './lib/profile';
import { dist, fmtMs, pool, round, sleep, type Dist } from './lib/util';

interface JobSample {
  id: number;
  exitCode: number;
  status: string | null;
  /** Wrapper-recorded exit time (ms). */
  endedAtMs: number | null;
  /** Job stream: terminal `job` message arrival − endedAtMs. */
  streamMs: number | null;
  /** List stream: terminal `updated` message arrival − endedAtMs. */
  listMs: number | null;
  /**
   * The job's terminal JobEvent `at` (the database's now() in the writing transaction) −
   * endedAtMs: how long until the monitor wrote the status; the rest is the stream's share.
   */
  dbMs: number | null;
  problem?: string;
}

interface Run {
  label: string;
  env: Record<string, string>;
  samples: JobSample[];
  stream: Dist;
  list: Dist;
  db: Dist;
  wrongStatus: number;
  missed: number;
  profile?: ProfileSummary;
}

/** The exit time (ms) the wrapper of job `id`'s first attempt recorded; null while it has none. */
export function readEndedAt(home: string, id: number): number | null {
  try {
    const rec = JSON.parse(readFileSync(path.join(attemptDir(id, 0, 1, home), 'exit'), 'utf8')) as { endedAtMs?: number };
    return typeof rec.endedAtMs === 'number' ? rec.endedAtMs : null;
  } catch {
    return null;
  }
}

/** The monitor's switch that skips executor.watch(): pure interval polling (lib/monitor/config.ts). */
export const EXIT_WATCH_KNOB = 'JOBDECK_EXIT_WATCH';

async function runOne(ctx: BenchContext, label: string, env: Record<string, string>, jobs: number, inFlight: number, preload?: string[]): Promise<Run> {
  const server: BenchServer = await startBenchServer({ label, env, profile: ctx.profile, preload });
  const listArrival = new Map<number, number>();
  const list = openListStream(server, (msg, t) => {
    if ((msg.type === 'updated' || msg.type === 'created') && isTerminal('job', msg.job.status) && !listArrival.has(msg.job.id)) listArrival.set(msg.job.id, t);
  });
  await list.opened.catch((err: Error) => ctx.log(`  ${label}: list stream unavailable: ${err.message}`));

  // Warm-up (not counted): the first requests compile routes and JIT the paths.
  await pool(inFlight * 2, inFlight, (i) => measureJob(server, listArrival, list, i, -1));
  const { value: samples, profile } = await server.profileWindow('jobs', () => pool(jobs, inFlight, (i) => measureJob(server, listArrival, list, i, i)));
  list.close();
  await server.stop();
  const stream = dist(samples.map((s) => s.streamMs).filter((v): v is number => v !== null));
  const listD = dist(samples.map((s) => s.listMs).filter((v): v is number => v !== null));
  const db = dist(samples.map((s) => s.dbMs).filter((v): v is number => v !== null));
  const wrongStatus = samples.filter((s) => s.status !== null && s.status !== (s.exitCode === 0 ? 'SUCCEEDED' : 'FAILED')).length;
  const missed = samples.filter((s) => s.streamMs === null).length;
  const run: Run = { label, env, samples, stream, list: listD, db, wrongStatus, missed };
  if (profile) run.profile = profile;
  return run;
}

/** One job: submit, subscribe, wait for its terminal status; `n` < 0 marks a warm-up job. */
async function measureJob(server: BenchServer, listArrival: Map<number, number>, list: ListStreamClient, i: number, n: number): Promise<JobSample> {
  const exitCode = i % 2;
  // Run time 0.3 s + a fraction spread evenly over [0, 1) s (golden-ratio sequence): a new job is
  // submitted right after the previous one ended — i.e. right after a poll tick in the baseline —
  // so a fixed run time would put every exit at the same phase of the 1 s poll and bias it.
  const sleepS = (0.3 + ((i * 0.6180339887) % 1)).toFixed(3);
  const { id } = await submitCmd(server, `sleep ${sleepS}; exit ${exitCode}`, { name: n < 0 ? `warmup-${i}` : `latency-${n}` });
  let terminalAt: number | null = null;
  let status: string | null = null;
  let problem: string | undefined;
  const js = openJobStream(server, id, '', {
    onMessage: (msg, t) => {
      if (msg.type === 'hello' && isTerminal('job', msg.job.status)) problem = 'job was terminal before the subscriber connected';
      if (msg.type === 'job' && isTerminal('job', msg.status) && terminalAt === null) {
        terminalAt = t;
        status = msg.status;
      }
    },
  });
  const closed = await Promise.race([js.closed, sleep(60_000).then(() => null)]);
  if (!closed) {
    js.close();
    problem ??= 'no terminal status within 60 s';
  } else if (closed.error) problem ??= `job stream: ${closed.error}`;
  // The list stream coalesces (≤ 1 message per job per 100 ms): give it that long.
  for (let k = 0; k < 20 && !listArrival.has(id) && list.ws.readyState === list.ws.OPEN; k++) await sleep(25);
  const endedAtMs = readEndedAt(server.home, id);
  const listAt = listArrival.get(id) ?? null;
  let dbAt: number | null = null;
  try {
    const ev = (await jobDetail(server, id)).events.find((e) => e.entity === 'job' && isTerminal('job', e.to));
    if (ev) dbAt = Date.parse(ev.at);
  } catch {
    /* the detail is only a diagnostic */
  }
  return {
    id,
    exitCode,
    status,
    endedAtMs,
    streamMs: terminalAt !== null && endedAtMs !== null ? terminalAt - endedAtMs : null,
    listMs: listAt !== null && endedAtMs !== null ? listAt - endedAtMs : null,
    dbMs: dbAt !== null && endedAtMs !== null ? dbAt - endedAtMs : null,
    problem,
  };
}

const roundDist = (d: Dist) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, round(v, 1)]));

export const latency: Measure = {
  name: 'latency',
  title: 'Exit → status latency',
  async run(ctx): Promise<MeasureResult> {
    const jobs = ctx.quick ? 40 : 200;
    const inFlight = 4;
    // Capacity check off: the in-flight jobs start at once (admission is not what this measures).
    const common = { JOBDECK_CAPACITY_CHECK: '0' };
    ctx.log(`latency: ${jobs} jobs, ${inFlight} in flight, normal monitor…`);
    const fast = await runOne(ctx, 'latency-normal', { ...common }, jobs, inFlight);
    // The baseline: exit notifications off, the reconcile pass every 1 s (Ray's monitor).
    ctx.log(`latency: same with the monitor forced to 1 s polling (${EXIT_WATCH_KNOB}=0)…`);
    const poll = await runOne(ctx, 'latency-poll', { ...common, JOBDECK_RECONCILE_MS: '1000', [EXIT_WATCH_KNOB]: '0' }, jobs, inFlight);

    const ratio = poll.stream.p50 / fast.stream.p50;
    const notes: string[] = [];
    for (const r of [fast, poll]) {
      if (r.missed) notes.push(`${r.label}: ${r.missed} of ${jobs} jobs without a measured latency (${[...new Set(r.samples.map((s) => s.problem).filter(Boolean))].slice(0, 3).join('; ')})`);
      if (r.wrongStatus) notes.push(`${r.label}: ${r.wrongStatus} jobs ended in an unexpected status (exit 0 → SUCCEEDED, exit 1 → FAILED)`);
    }
    if (poll.stream.p50 < 150) {
      notes.push(`baseline invalid: its p50 is below 150 ms, so the monitor still learned of exits at once (${EXIT_WATCH_KNOB}=0 ignored?)`);
    }
    return {
      rows: [
        { metric: 'p50 exit → job stream', value: fmtMs(fast.stream.p50), target: '< 20 ms', pass: fast.stream.p50 < 20 },
        { metric: 'p99 exit → job stream', value: fmtMs(fast.stream.p99), target: '< 100 ms', pass: fast.stream.p99 < 100 },
        { metric: 'p50 / p99 exit → list stream', value: `${fmtMs(fast.list.p50)} / ${fmtMs(fast.list.p99)}` },
        { metric: 'p50 / p99 exit → status written (JobEvent.at)', value: `${fmtMs(fast.db.p50)} / ${fmtMs(fast.db.p99)}` },
        { metric: 'baseline (1 s polling) p50 / p99', value: `${fmtMs(poll.stream.p50)} / ${fmtMs(poll.stream.p99)}` },
        { metric: 'baseline p50 ÷ p50', value: `${ratio.toFixed(1)}×`, target: '≥ 25×', pass: ratio >= 25 },
      ],
      data: {
        jobs,
        inFlight,
        job: 'sleep 0.3–1.3 (evenly spread); exit (i % 2)',
        baseline: `${EXIT_WATCH_KNOB}=0, JOBDECK_RECONCILE_MS=1000`,
        runs: [fast, poll].map((r) => ({
          label: r.label,
          env: r.env,
          jobStreamMs: roundDist(r.stream),
          listStreamMs: roundDist(r.list),
          statusWrittenMs: roundDist(r.db),
          missed: r.missed,
          wrongStatus: r.wrongStatus,
          samples: r.samples.map((s) => ({
            ...s,
            streamMs: s.streamMs === null ? null : round(s.streamMs, 2),
            listMs: s.listMs === null ? null : round(s.listMs, 2),
            dbMs: s.dbMs === null ? null : round(s.dbMs, 2),
          })),
          profile: r.profile,
        })),
        ratioP50: round(ratio, 2),
      },
      notes,
    };
  },
};
