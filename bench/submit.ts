/**
 * Measure 4 — submissions. Jobs/s accepted by `POST /api/jobs` with 16 concurrent clients
 * (each sends its next request when the previous answered), on PGlite and on PostgreSQL (a
 * fresh database, dropped after).
 *
 * So that running jobs do not skew it, the server gets JOBDECK_CPUS=1 and a first "blocker"
 * job (`sleep 3600`) takes that CPU: every submitted job (`true`) stays PENDING. The monitor
 * still sees each new job (admission runs; it just does not fit). 50 warm-up submits come first.
 */
import type { MonitorState } from '../lib/monitor/state';
import type { Measure, MeasureResult, Row } from './lib/context';
import { SubmitClient, submitCmd } from './lib/client';
import { cancelEverything, waitAllStatus } from './lib/jobs';
import { createPgDatabase } from './lib/pg';
import { startBenchServer } from './lib/server';
import { cpuTimeMs } from './lib/proc';
import { dist, fmtMs, nowMs, pool, round } from './lib/util';

const CLIENTS = 16;

async function measureKind(kind: 'pglite' | 'postgresql', n: number, ctx: Parameters<Measure['run']>[0]) {
  const env: Record<string, string> = { JOBDECK_CPUS: '1' };
  if (kind === 'postgresql') env.DATABASE_URL = (await createPgDatabase(ctx.pgUrl, 'submit')).url;
  const server = await startBenchServer({ label: `submit-${kind}`, env, profile: ctx.profile });
  const blocker = await submitCmd(server, 'sleep 3600', { name: 'blocker' });
  await waitAllStatus(server, null, [blocker.id], 'RUNNING', 30_000, 200);
  const client = new SubmitClient(server, CLIENTS);
  await pool(50, CLIENTS, (i) => client.submit('true', { name: `warmup-${i}` }));
  ctx.log(`submit: ${kind}: ${n} submits through ${CLIENTS} clients…`);
  const lat: number[] = [];
  let errors = 0;
  let wallMs = 0;
  let cpuMs = 0;
  let clientCpuMs = 0;
  const doneAt: number[] = [];
  const tenth = Math.floor(n / 10);
  /** Server CPU (ms) at the start and after each tenth of the submits. */
  const cpuAtTenth: number[] = [];
  const { profile } = await server.profileWindow('submit', async () => {
    const c0 = cpuTimeMs(server.pid)!;
    cpuAtTenth.push(c0);
    const own0 = process.cpuUsage();
    const t0 = nowMs();
    await pool(n, CLIENTS, async (i) => {
      const s = nowMs();
      try {
        await client.submit('true', { name: `submit-${i}` });
      } catch {
        errors++;
      }
      const e = nowMs();
      lat.push(e - s);
      doneAt.push(e - t0);
      if (doneAt.length % tenth === 0) cpuAtTenth.push(cpuTimeMs(server.pid)!);
    });
    wallMs = nowMs() - t0;
    cpuMs = cpuTimeMs(server.pid)! - c0;
    const own = process.cpuUsage(own0);
    clientCpuMs = (own.user + own.system) / 1000;
  });
  client.close();
  // Rate over the first and the last quarter of the submits: does it degrade as PENDING jobs pile up?
  doneAt.sort((a, b) => a - b);
  const q = Math.floor(n / 4);
  const firstQuarter = q / (doneAt[q - 1] / 1000);
  const lastQuarter = q / ((doneAt[n - 1] - doneAt[n - 1 - q]) / 1000);
  const rate = (n - errors) / (wallMs / 1000);
  const rateByTenth = Array.from({ length: 10 }, (_, k) => round(tenth / ((doneAt[(k + 1) * tenth - 1] - (k ? doneAt[k * tenth - 1] : 0)) / 1000), 1));
  // Group commit (lib/store submitJob): submit statements for the whole server life, warm-up included.
  const { submits } = await server.json<MonitorState>('/api/monitor');
  const stop = await cancelEverything(server, 60_000);
  await server.stop();
  return {
    kind,
    n,
    errors,
    wallMs: round(wallMs),
    rate: round(rate, 1),
    rateFirstQuarter: round(firstQuarter, 1),
    rateLastQuarter: round(lastQuarter, 1),
    rateByTenth,
    serverCpuMsPerSubmitByTenth: cpuAtTenth.slice(1).map((c, k) => round((c - cpuAtTenth[k]) / tenth, 2)),
    submitStatements: submits.statements,
    meanBatch: round(submits.jobs / Math.max(1, submits.statements), 2),
    serverCpuMsPerSubmit: round(cpuMs / n, 2),
    /** The bench process's own CPU (the 16 clients) per submit: CPU the server under test did not get. */
    clientCpuMsPerSubmit: round(clientCpuMs / n, 2),
    latencyMs: dist(lat),
    stop,
    profile,
  };
}

export const submit: Measure = {
  name: 'submit',
  title: 'Submissions',
  async run(ctx): Promise<MeasureResult> {
    const n = ctx.quick ? 300 : 2000;
    const pg = await measureKind('postgresql', n, ctx);
    const pl = await measureKind('pglite', n, ctx);
    const rows: Row[] = [];
    for (const r of [pg, pl]) {
      const min = r.kind === 'postgresql' ? 500 : 250;
      rows.push({ metric: `${r.kind}: jobs/s accepted (${CLIENTS} clients)`, value: `${r.rate}/s`, target: `≥ ${min}/s`, pass: r.rate >= min });
      rows.push({
        metric: `${r.kind}: request p50 / p99; CPU per submit server / client`,
        value: `${fmtMs(r.latencyMs.p50)} / ${fmtMs(r.latencyMs.p99)}; ${r.serverCpuMsPerSubmit} / ${r.clientCpuMsPerSubmit} ms`,
      });
      rows.push({ metric: `${r.kind}: rate first / last quarter; jobs per statement`, value: `${r.rateFirstQuarter}/s / ${r.rateLastQuarter}/s; ${r.meanBatch}` });
    }
    const notes: string[] = ['jobs stay PENDING: JOBDECK_CPUS=1 with a sleep job holding the CPU'];
    for (const r of [pg, pl]) if (r.errors) notes.push(`${r.kind}: ${r.errors} submits failed`);
    return { rows, data: { clients: CLIENTS, jobs: n, runs: [pg, pl] }, notes };
  },
};
