/**
 * Measure 3 — log throughput. One job writes ~200 MB (`head -c … /dev/urandom | base64`: fast,
 * incompressible, 77-byte lines). A live client follows it while it runs; once it ended, the
 * finished log is replayed (`follow=0`) to one client, then to 50 clients at once. Rates are log
 * bytes delivered ÷ wall time from opening the socket(s) to the last `end`; the limit is `cat`
 * of the same file to /dev/null, timed in the same run (file in the page cache, median of 3).
 * Server RSS is sampled every 100 ms throughout.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import { attemptDir } from '../lib/jobs/paths';
import { isTerminal } from '../lib/jobs/status';
import type { Measure, MeasureResult } from './lib/context';
import { jobDetail, openJobStream, submitCmd, type JobStreamClient } from './lib/client';
import { cpuTimeMs, rssBytes, sampleRss } from './lib/proc';
import { startBenchServer, type BenchServer } from './lib/server';
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
  closeCodes: number[];
}

/** Opens `clients` follow=0 streams at once and waits for all to end. */
async function replay(server: BenchServer, id: number, clients: number, expectBytes: number): Promise<Replay> {
  const s0 = cpuTimeMs(server.pid)!;
  const b0 = process.cpuUsage();
  const t0 = nowMs();
  const streams: { c: JobStreamClient; endAt: number }[] = [];
  for (let i = 0; i < clients; i++) {
    const entry = { c: null as unknown as JobStreamClient, endAt: 0 };
    entry.c = openJobStream(server, id, 'follow=0', {
      onMessage: (m, t) => {
        if (m.type === 'end') entry.endAt = t;
      },
    });
    streams.push(entry);
  }
  const closed = await Promise.all(streams.map((s) => s.c.closed));
  const t1 = Math.max(...streams.map((s) => s.endAt || nowMs()));
  const wall = nowMs() - t0;
  const serverCpuPct = ((cpuTimeMs(server.pid)! - s0) / wall) * 100;
  const b1 = process.cpuUsage(b0);
  const clientCpuPct = ((b1.user + b1.system) / 1000 / wall) * 100;
  const bytesEach = streams.map((s) => s.c.logBytes());
  const totalBytes = bytesEach.reduce((a, b) => a + b, 0);
  const rates = streams.map((s) => s.c.logBytes() / (((s.endAt || t1) - t0) / 1000));
  const problems = streams.flatMap((s) => s.c.problems);
  const short = bytesEach.filter((b) => b !== expectBytes).length;
  if (short) problems.push(`${short} of ${clients} clients received a byte count other than the log's ${expectBytes}: ${[...new Set(bytesEach)].slice(0, 5).join(', ')}`);
  return {
    clients,
    serverCpuPct: round(serverCpuPct),
    clientCpuPct: round(clientCpuPct),
    bytesEach,
    totalBytes,
    wallMs: t1 - t0,
    rate: totalBytes / ((t1 - t0) / 1000),
    perClientRate: { min: Math.min(...rates), p50: percentile(rates, 50), max: Math.max(...rates) },
    problems,
    closeCodes: [...new Set(closed.map((c) => c.code))],
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
    const server = await startBenchServer({ label: 'logs', profile: ctx.profile });
    await sleep(1000);
    const idleRss = rssBytes(server.pid) ?? 0;
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

    const rssReplay = sampleRss(server.pid, 100);
    ctx.log(`logs: replay (follow=0) to 1 client…`);
    const oneW = await server.profileWindow('replay-1', () => replay(server, id, 1, fileBytes));
    const one = oneW.value;
    ctx.log(`logs: replay to ${fanout} clients at once…`);
    const manyW = await server.profileWindow(`replay-${fanout}`, () => replay(server, id, fanout, fileBytes));
    const many = manyW.value;
    const rssR = rssReplay.stop();
    await server.stop();

    const maxRss = Math.max(rssLive.maxBytes, rssR.maxBytes);
    const oneRatio = one.rate / catRate;
    const manyRatio = many.rate / catRate;
    const notes: string[] = [];
    const problems = [...live.problems, ...one.problems, ...many.problems];
    if (problems.length) notes.push(`stream problems: ${problems.slice(0, 5).join('; ')}`);
    if (live.logBytes() !== fileBytes) notes.push(`live client received ${live.logBytes()} of ${fileBytes} bytes (closed ${liveClosed.code} ${liveClosed.error ?? ''})`);
    if (logBytes !== fileBytes) notes.push(`API logBytes ${logBytes} ≠ file size ${fileBytes}`);
    return {
      rows: [
        { metric: `cat of the ${fmtBytes(fileBytes)} log to /dev/null`, value: fmtRate(catRate) },
        { metric: '1 client, replay (follow=0)', value: `${fmtRate(one.rate)} = ${(oneRatio * 100).toFixed(0)} % of cat`, target: '≥ 50 %', pass: oneRatio >= 0.5 },
        { metric: `${fanout} clients at once, together`, value: `${fmtRate(many.rate)} = ${(manyRatio * 100).toFixed(0)} % of cat`, target: '≥ 25 %', pass: manyRatio >= 0.25 },
        { metric: 'CPU % of a core, server / bench clients: 1 client; many', value: `${one.serverCpuPct} / ${one.clientCpuPct}; ${many.serverCpuPct} / ${many.clientCpuPct}` },
        { metric: 'live follow (writer-bound) / end after exit', value: `${fmtRate(liveRate)} in ${fmtMs(liveMs)}, job ran ${fmtMs(jobRunMs)} / +${fmtMs(endLagMs)}` },
        { metric: 'server RSS max (live + replays); idle before', value: `${fmtBytes(maxRss)}; ${fmtBytes(idleRss)}`, target: '< 300 MB', pass: maxRss < 300e6 },
      ],
      data: {
        jobId: id,
        status: status || detail.status,
        fileBytes,
        catMs: cats.map((x) => round(x, 2)),
        catRate: Math.round(catRate),
        live: { bytes: live.logBytes(), ms: round(liveMs), rate: Math.round(liveRate), jobRunMs: round(jobRunMs), endAfterExitMs: round(endLagMs), close: liveClosed },
        one: { ...one, bytesEach: undefined, ratioToCat: round(oneRatio, 3) },
        many: { ...many, bytesEach: undefined, ratioToCat: round(manyRatio, 3) },
        rss: { idleBytes: idleRss, live: rssLive, replay: rssR },
        profile: ctx.profile ? { one: oneW.profile, many: manyW.profile } : undefined,
      },
      notes,
    };
  },
};
