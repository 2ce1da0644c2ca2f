/**
 * Measure 3 — log throughput. On a data folder used before (lib/server.ts warmHome), one job
 * writes ~200 MB (`head -c … /dev/urandom | base64`: fast,
 * incompressible, 77-byte lines). A live client follows it while it runs; once it ended, the
 * finished log is replayed (`follow=0`) to one client, then to 50 clients at once. Rates are log
 * bytes delivered ÷ wall time from opening the socket(s) to the last `end`, received by the bench's
 * minimal frame counter (lib/rawws.ts: no payload copies, so the rate is the server's; one run
 * through the `ws` client library is shown for comparison); the limit is `cat`
 * of the same file to /dev/null, timed in the same run (file in the page cache, median of 3).
 * Server RSS is sampled every 100 ms throughout.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import { attemptDir } from '../lib/jobs/paths';
import { isTerminal } from '../lib/jobs/status';
import type { ProcessMemory } from '../lib/monitor/state';
import type { Measure, MeasureResult } from './lib/context';
import { jobDetail, openJobStream, submitCmd, type JobStreamClient } from './lib/client';
import { cpuTimeMs, rssBytes, sampleRss } from './lib/proc';
import { onCleanup } from './lib/cleanup';
import { rawJobStream } from './lib/rawws';
import { createPgDatabase } from './lib/pg';
import { idleRss, ROOT, serverMemory, startBenchServer, warmHome, type BenchServer } from './lib/server';
import { fmtBytes, fmtMs, fmtRate, nowMs, percentile, round, sleep } from './lib/util';

/** Times `cat file > /dev/null` (ms). */
function catMs(file: string): number {
  const devnull = openSync('/dev/null', 'w');
  try {
    const t0 = nowMs();
    const r = spawnSync('cat', [file], { stdio: ['ignore', devnull, 'inherit'] });
    const ms = nowMs() - t0;
    if (r.status !== 0) throw new Error(`cat ${file} failed (exit ${r.status})`);
    return ms;
  } finally {
    closeSync(devnull);
  }
}

interface Replay {
  clients: number;
  client: 'raw' | 'ws';
  /** Server CPU during the replay, % of one core (/proc utime+stime). */
  serverCpuPct: number;
  /** This bench process's CPU during the replay (the clients), % of one core. */
  clientCpuPct: number;
  bytesEach: number[];
  totalBytes: number;
  wallMs: number;
  rate: number;
  perClientRate: { min: number; p50: number; max: number };
  problems: string[];
  closeCodes: (number | null)[];
}

/** Starts bench/lib/ws-reference-server.ts on `file` (cleaned up with the measure). */
async function startReference(file: string): Promise<{ url: string; token: string; pid: number; wsUrl: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/lib/ws-reference-server.ts', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup('ws reference server', () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`ws reference server exited (${code}) before listening`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return { url, wsUrl: url.replace(/^http/, 'ws'), token: 'none', pid: proc.pid! };
}

/**
 * Opens `clients` follow=0 streams at once and waits for all to end. `client`: 'raw' = the
 * bench's minimal frame counter (lib/rawws.ts, no payload copies), 'ws' = the `ws` library.
 */
async function replay(server: Pick<BenchServer, 'url' | 'token' | 'pid' | 'wsUrl'>, id: number, clients: number, expectBytes: number, client: 'raw' | 'ws'): Promise<Replay> {
  const s0 = cpuTimeMs(server.pid)!;
  const b0 = process.cpuUsage();
  const t0 = nowMs();
  const runs: Promise<{ bytes: number; endAt: number; code: number | null; problems: string[] }>[] = [];
  for (let i = 0; i < clients; i++) {
    if (client === 'raw') {
      runs.push(rawJobStream(server, id, 'follow=0').then((r) => ({ bytes: r.logBytes, endAt: r.endAt, code: r.closeCode, problems: r.problems })));
    } else {
      let endAt = 0;
      const c: JobStreamClient = openJobStream(server as BenchServer, id, 'follow=0', {
        onMessage: (m, t) => {
          if (m.type === 'end') endAt = t;
        },
      });
      runs.push(c.closed.then((cl) => ({ bytes: c.logBytes(), endAt, code: cl.code, problems: [...c.problems, ...(cl.error ? [cl.error] : [])] })));
    }
  }
  const done = await Promise.all(runs);
  const t1 = Math.max(...done.map((d) => d.endAt || nowMs()));
  const wall = nowMs() - t0;
  const serverCpuPct = ((cpuTimeMs(server.pid)! - s0) / wall) * 100;
  const b1 = process.cpuUsage(b0);
  const clientCpuPct = ((b1.user + b1.system) / 1000 / wall) * 100;
  const bytesEach = done.map((d) => d.bytes);
  const totalBytes = bytesEach.reduce((a, b) => a + b, 0);
  const rates = done.map((d) => d.bytes / (((d.endAt || t1) - t0) / 1000));
  const problems = done.flatMap((d) => d.problems);
  const short = bytesEach.filter((b) => b !== expectBytes).length;
  if (short) problems.push(`${short} of ${clients} clients received a byte count other than the log's ${expectBytes}: ${[...new Set(bytesEach)].slice(0, 5).join(', ')}`);
  return {
    clients,
    client,
    serverCpuPct: round(serverCpuPct),
    clientCpuPct: round(clientCpuPct),
    bytesEach,
    totalBytes,
    wallMs: t1 - t0,
    rate: totalBytes / ((t1 - t0) / 1000),
    perClientRate: { min: Math.min(...rates), p50: percentile(rates, 50), max: Math.max(...rates) },
    problems,
    closeCodes: [...new Set(done.map((d) => d.code))],
  };
}

export const logs: Measure = {
  name: 'logs',
  title: 'Log throughput',
  async run(ctx): Promise<MeasureResult> {
    const target = ctx.quick ? 20e6 : 200e6;
    const fanout = ctx.quick ? 10 : 50;
    // base64 writes 4 bytes per 3 read, plus a newline every 76 characters.
    const inputBytes = Math.round(((target * 3) / 4) * (76 / 77));
    const warm = await warmHome('logs');
    const server = await startBenchServer({ label: 'logs', ...warm, profile: ctx.profile });
    await sleep(1000);
    const idleRssBytes = rssBytes(server.pid) ?? 0;
    const rss = sampleRss(server.pid, 100);

    ctx.log(`logs: one job writing ~${fmtBytes(target)}, followed live…`);
    const { id } = await submitCmd(server, `head -c ${inputBytes} /dev/urandom | base64`, { name: 'logs-200mb' });
    let firstByteAt = 0;
    let endAt = 0;
    let status = '';
    const live = openJobStream(server, id, '', {
      onLog: (_t, _a, _o, _b, t) => {
        if (!firstByteAt) firstByteAt = t;
      },
      onMessage: (m, t) => {
        if (m.type === 'end') endAt = t;
        if (m.type === 'job' && isTerminal('job', m.status)) status = m.status;
      },
    });
    const liveClosed = await live.closed;
    const rssLive = rss.stop();
    const detail = await jobDetail(server, id);
    const att = detail.tasks[0]?.attemptList[0];
    const logBytes = att?.logBytes ?? 0;
    const logFile = path.join(attemptDir(id, 0, 1, server.home), 'run.log');
    const fileBytes = statSync(logFile).size;
    if (detail.status !== 'SUCCEEDED') throw new Error(`the log job ended ${detail.status} (${detail.statusReason ?? ''})`);
    const jobRunMs = att?.startedAt && att?.endedAt ? Date.parse(att.endedAt) - Date.parse(att.startedAt) : NaN;
    const liveMs = endAt - firstByteAt;
    const liveRate = live.logBytes() / (liveMs / 1000);
    const endLagMs = att?.endedAt ? endAt - Date.parse(att.endedAt) : NaN;

    ctx.log(`logs: cat baseline…`);
    catMs(logFile); // page cache warm
    const cats = [catMs(logFile), catMs(logFile), catMs(logFile)];
    const catRate = fileBytes / (percentile(cats, 50) / 1000);

    // RSS sampled per replay phase, and the server's own memory report after each (where it goes).
    const phases: { phase: string; rssMaxBytes: number; after: ProcessMemory | null }[] = [];
    const phase = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      const sampler = sampleRss(server.pid, 100);
      const out = await fn();
      phases.push({ phase: name, rssMaxBytes: sampler.stop().maxBytes, after: await serverMemory(server) });
      return out;
    };
    const rssReplay = sampleRss(server.pid, 100);
    ctx.log(`logs: replay (follow=0) to 1 client…`);
    const oneW = await phase('1 raw', () => server.profileWindow('replay-1', () => replay(server, id, 1, fileBytes, 'raw')));
    const one = oneW.value;
    const oneWs = await phase('1 ws', () => replay(server, id, 1, fileBytes, 'ws'));
    ctx.log(`logs: replay to ${fanout} clients at once…`);
    const manyW = await phase(`${fanout} raw`, () => server.profileWindow(`replay-${fanout}`, () => replay(server, id, fanout, fileBytes, 'raw')));
    const many = manyW.value;
    const rssR = rssReplay.stop();
    const last = phases.at(-1)?.after;
    await server.stop();

    ctx.log(`logs: the same file from a bare ws sender (the transport's limit), 1 and ${fanout} clients…`);
    // Context for the RSS target: the same server idle on PostgreSQL (no PGlite in the process).
    const pgIdleRss = await idleRss('logs-pg-idle', { DATABASE_URL: (await createPgDatabase(ctx.pgUrl, 'logsidle')).url });
    const ref = await startReference(logFile);
    const refOne = await replay(ref, 1, 1, fileBytes, 'raw');
    const refMany = await replay(ref, 1, fanout, fileBytes, 'raw');

    const maxRss = Math.max(rssLive.maxBytes, rssR.maxBytes);
    const oneRatio = one.rate / catRate;
    const manyRatio = many.rate / catRate;
    const notes: string[] = [];
    const problems = [...live.problems, ...one.problems, ...oneWs.problems, ...many.problems, ...refOne.problems, ...refMany.problems];
    if (problems.length) notes.push(`stream problems: ${problems.slice(0, 5).join('; ')}`);
    if (live.logBytes() !== fileBytes) notes.push(`live client received ${live.logBytes()} of ${fileBytes} bytes (closed ${liveClosed.code} ${liveClosed.error ?? ''})`);
    if (logBytes !== fileBytes) notes.push(`API logBytes ${logBytes} ≠ file size ${fileBytes}`);
    return {
      rows: [
        { metric: `cat of the ${fmtBytes(fileBytes)} log to /dev/null`, value: fmtRate(catRate) },
        { metric: '1 client, replay (follow=0)', value: `${fmtRate(one.rate)} = ${(oneRatio * 100).toFixed(0)} % of cat`, target: '≥ 50 %', pass: oneRatio >= 0.5 },
        { metric: `${fanout} clients at once, together`, value: `${fmtRate(many.rate)} = ${(manyRatio * 100).toFixed(0)} % of cat`, target: '≥ 25 %', pass: manyRatio >= 0.25 },
        {
          metric: `bare ws sender, same file (transport limit): 1 / ${fanout} clients`,
          value: `${fmtRate(refOne.rate)} / ${fmtRate(refMany.rate)} → jobdeck at ${((one.rate / refOne.rate) * 100).toFixed(0)} % / ${((many.rate / refMany.rate) * 100).toFixed(0)} %`,
        },
        { metric: '1 client through the `ws` library client (for comparison)', value: `${fmtRate(oneWs.rate)} = ${((oneWs.rate / catRate) * 100).toFixed(0)} % of cat` },
        {
          metric: 'CPU % of a core, server / bench client(s): 1 raw; 1 ws; many raw',
          value: `${one.serverCpuPct} / ${one.clientCpuPct}; ${oneWs.serverCpuPct} / ${oneWs.clientCpuPct}; ${many.serverCpuPct} / ${many.clientCpuPct}`,
        },
        { metric: 'live follow (writer-bound) / end after exit', value: `${fmtRate(liveRate)} in ${fmtMs(liveMs)}, job ran ${fmtMs(jobRunMs)} / +${fmtMs(endLagMs)}` },
        { metric: 'server RSS max (live + replays); idle before', value: `${fmtBytes(maxRss)}; ${fmtBytes(idleRssBytes)}`, target: '< 300 MB', pass: maxRss < 300e6 },
        { metric: `server RSS max: live / ${phases.map((p) => p.phase).join(' / ')}`, value: [rssLive.maxBytes, ...phases.map((p) => p.rssMaxBytes)].map(fmtBytes).join(' / ') },
        ...(last ? [{ metric: `after ${fanout} clients: JS heap used / total; external (PGlite's memory, buffers)`, value: `${fmtBytes(last.heapUsedBytes)} / ${fmtBytes(last.heapTotalBytes)}; ${fmtBytes(last.externalBytes)}` }] : []),
        { metric: 'idle server RSS on PostgreSQL instead (no PGlite)', value: fmtBytes(pgIdleRss) },
      ],
      data: {
        jobId: id,
        status: status || detail.status,
        fileBytes,
        catMs: cats.map((x) => round(x, 2)),
        catRate: Math.round(catRate),
        live: { bytes: live.logBytes(), ms: round(liveMs), rate: Math.round(liveRate), jobRunMs: round(jobRunMs), endAfterExitMs: round(endLagMs), close: liveClosed },
        one: { ...one, bytesEach: undefined, ratioToCat: round(oneRatio, 3) },
        oneWs: { ...oneWs, bytesEach: undefined, ratioToCat: round(oneWs.rate / catRate, 3) },
        reference: {
          one: { ...refOne, bytesEach: undefined, ratioToCat: round(refOne.rate / catRate, 3) },
          many: { ...refMany, bytesEach: undefined, ratioToCat: round(refMany.rate / catRate, 3) },
        },
        many: { ...many, bytesEach: undefined, ratioToCat: round(manyRatio, 3) },
        rss: { idleBytes: idleRssBytes, live: rssLive, replay: rssR, phases, postgresqlIdleBytes: pgIdleRss },
        profile: ctx.profile ? { one: oneW.profile, many: manyW.profile } : undefined,
      },
      notes,
    };
  },
};
