/**
 * Measure 2 — concurrent jobs, at 1,000 (`concurrent`) and 5,000 (`concurrent5000`). On a data
 * folder used before (lib/server.ts warmHome: a restart, as a long-running install), N `sleep`
 * jobs (capacity check off: JOBDECK_CAPACITY_CHECK=0) submitted through 16 concurrent clients;
 * time until all are RUNNING (list stream, confirmed by the REST list); then, while steady, the
 * server's CPU (utime+stime from /proc/<pid>/stat over a window, % of one core) and RSS
 * (/proc/<pid>/status VmRSS), and what the jobs' own processes hold of the machine's memory
 * (MemAvailable before the first submit − in the steady window). Usage sampling, leases and the
 * outbox stay on (their defaults). Then cancel everything and check that no attempt process is
 * left.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BenchContext, Measure, MeasureResult } from './lib/context';
import { cancelEverything, submitMany, trackStatuses, waitAllStatus } from './lib/jobs';
import { childrenMatching, clockTicks, cpuTimeMs, processesUnder, rssBytes, sampleRss } from './lib/proc';
import { cpuJiffies } from './lib/settle';
import { serverMemory, startBenchServer, warmHome } from './lib/server';
import { diskBytes, fmtBytes, fmtMs, nowMs, round, sleep } from './lib/util';

/** One size of the measure and its targets (issue targets: bench/README.md "Targets"). */
interface Size {
  name: string;
  title: string;
  jobs: number;
  quickJobs: number;
  /** All RUNNING within (ms, from the first submit). */
  allRunningMs: number;
  /** Steady server CPU at most (% of one core). */
  cpuPct: number;
  /** Steady server RSS below (bytes). */
  rssBytes: number;
  /** How long to wait for all RUNNING, and for all terminal after the cancel (ms). */
  waitMs: number;
  /**
   * The steady window (ms): two whole usage-sampling cycles at least, so that the periodic work
   * is in it as often as it runs (5,000 attempts are sampled every 25 s: lib/monitor/usage.ts).
   */
  windowMs: number;
}

function measureOf(size: Size): Measure {
  return { name: size.name, title: size.title, run: (ctx) => runSize(ctx, size) };
}

/** MemAvailable of the machine (bytes), from /proc/meminfo. */
function memAvailable(): number {
  const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

export const concurrent = measureOf({ name: 'concurrent', title: 'Concurrent jobs', jobs: 1000, quickJobs: 100, allRunningMs: 20_000, cpuPct: 5, rssBytes: 400e6, waitMs: 120_000, windowMs: 15_000 });
export const concurrent5000 = measureOf({ name: 'concurrent5000', title: 'Concurrent jobs, 5,000', jobs: 5000, quickJobs: 500, allRunningMs: 90_000, cpuPct: 15, rssBytes: 600e6, waitMs: 300_000, windowMs: 50_000 });

async function runSize(ctx: BenchContext, size: Size): Promise<MeasureResult> {
  {
    const n = ctx.quick ? size.quickJobs : size.jobs;
    const settleMs = ctx.quick ? 2000 : 5000;
    const windowMs = ctx.quick ? 5000 : size.windowMs;
    const env = { JOBDECK_CAPACITY_CHECK: '0' };
    const warm = await warmHome(size.name, env);
    const server = await startBenchServer({ label: size.name, env, ...warm, profile: ctx.profile });
    await sleep(1000);
    const idleRss = rssBytes(server.pid) ?? 0;
    const idleMemory = await serverMemory(server);
    const tracker = await trackStatuses(server);
    const rssAll = sampleRss(server.pid, 200);
    const memBefore = memAvailable();
    ctx.log(`${size.name}: submitting ${n} × sleep 3600…`);
    // The attempt launcher (a child process, started with the first launch) spawns the attempts:
    // its CPU is reported beside the server's.
    let launcherPid: number | null = null;
    const launcherCpu = () => {
      launcherPid ??= childrenMatching(server.pid, 'launcher-main').at(0) ?? null;
      return launcherPid === null ? 0 : (cpuTimeMs(launcherPid) ?? 0);
    };
    const cs0 = cpuTimeMs(server.pid)!;
    const cl0 = launcherCpu();
    const ticks = clockTicks();
    const m0 = cpuJiffies();
    const t0 = nowMs();
    let submittedMs = 0;
    const start = await server.profileWindow('start', async () => {
      const ids = await submitMany(server, n, 'sleep 3600', 16, 'concurrent');
      submittedMs = nowMs() - t0;
      ctx.log(`${size.name}: ${n} submitted in ${fmtMs(submittedMs)}; waiting for all RUNNING…`);
      return { ids, allRunningAt: await waitAllStatus(server, tracker, ids, 'RUNNING', size.waitMs) };
    });
    const { ids, allRunningAt } = start.value;
    // Server CPU from the first submit until all RUNNING, per job: each job's submit, admission, launch and attach.
    const startCpuMs = cpuTimeMs(server.pid)! - cs0;
    const startLauncherCpuMs = launcherCpu() - cl0;
    // The whole machine's CPU meanwhile (all cores): the jobs' own processes, the 16 clients and the kernel too.
    const machineStartMs = ((cpuJiffies().busy - m0.busy) * 1000) / ticks;
    const allRunningMs = allRunningAt - t0;
    const afterSubmitMs = allRunningAt - (t0 + submittedMs);

    ctx.log(`${size.name}: all RUNNING after ${fmtMs(allRunningMs)}; settling ${settleMs} ms, then a ${windowMs} ms steady window…`);
    // The PGlite folder over the settle and the window: what the usage rounds' rewrites leave on disk.
    const wal0 = diskBytes(path.join(server.home, 'db', 'pg_wal'));
    const disk0 = diskBytes(path.join(server.home, 'db'));
    const d0 = nowMs();
    await sleep(settleMs);
    const rssSteady = sampleRss(server.pid, 100);
    const c0 = cpuTimeMs(server.pid)!;
    const l0 = launcherCpu();
    const w0 = nowMs();
    const steadyProf = await server.profileWindow('steady', () => sleep(windowMs));
    const c1 = cpuTimeMs(server.pid)!;
    const l1 = launcherCpu();
    const w1 = nowMs();
    const diskPerMin = ((diskBytes(path.join(server.home, 'db')) - disk0) / (w1 - d0)) * 60_000;
    const walPerMin = ((diskBytes(path.join(server.home, 'db', 'pg_wal')) - wal0) / (w1 - d0)) * 60_000;
    const steady = rssSteady.stop();
    const steadyMemory = await serverMemory(server);
    const cpuPct = ((c1 - c0) / (w1 - w0)) * 100;
    const procs = processesUnder(server.home).length;
    const jobsMemory = memBefore - memAvailable();
    const stillRunning = tracker.count(ids, 'RUNNING');

    ctx.log(`${size.name}: cancelling all…`);
    const stopW = await server.profileWindow('cancel', () => cancelEverything(server, size.waitMs));
    const stop = stopW.value;
    tracker.close();
    const rss = rssAll.stop();
    await server.stop();

    const notes: string[] = [];
    if (ctx.profile) notes.push('profiled run: the inspector adds CPU to the steady window');
    if (stillRunning !== n) notes.push(`${n - stillRunning} jobs left RUNNING during the steady window`);
    if (stop.leftover) notes.push(`${stop.leftover} attempt processes survived the cancel (killed by the bench)`);
    if (stop.allTerminalMs === null) notes.push(`${stop.notTerminal} jobs not terminal ${size.waitMs / 1000} s after the cancel`);
    return {
      rows: [
        { metric: `time until all ${n} RUNNING (from first submit)`, value: fmtMs(allRunningMs), target: `≤ ${size.allRunningMs / 1000} s`, pass: allRunningMs <= size.allRunningMs },
        { metric: 'steady server CPU (% of one core)', value: `${cpuPct.toFixed(1)} %`, target: `≤ ${size.cpuPct} %`, pass: cpuPct <= size.cpuPct },
        { metric: `server CPU per job, first submit → all RUNNING (launcher's beside it)`, value: `${(startCpuMs / n).toFixed(2)} ms (${(startLauncherCpuMs / n).toFixed(2)} ms)` },
        { metric: 'machine CPU per job (all cores, all processes), first submit → all RUNNING', value: `${(machineStartMs / n).toFixed(1)} ms` },
        { metric: 'steady server CPU-seconds per minute (launcher\'s beside it)', value: `${((c1 - c0) / (w1 - w0) * 60).toFixed(2)} s (${((l1 - l0) / (w1 - w0) * 60).toFixed(2)} s)` },
        { metric: 'steady server RSS (max); idle before', value: `${fmtBytes(steady.maxBytes)}; ${fmtBytes(idleRss)}`, target: `< ${size.rssBytes / 1e6} MB`, pass: steady.maxBytes < size.rssBytes },
        { metric: 'PGlite data folder growth while steady (usage rounds every 5 s)', value: `${fmtBytes(Math.round(diskPerMin))} a minute (of it the write-ahead log ${fmtBytes(Math.round(walPerMin))})` },
        { metric: `the jobs' own processes: machine memory (MemAvailable drop); processes`, value: `${fmtBytes(jobsMemory)} (${fmtBytes(jobsMemory / n)} a job); ${procs}` },
        { metric: 'steady JS heap used / external (PGlite\'s WebAssembly memory); idle before', value: steadyMemory && idleMemory ? `${fmtBytes(steadyMemory.heapUsedBytes)} / ${fmtBytes(steadyMemory.externalBytes)}; ${fmtBytes(idleMemory.heapUsedBytes)} / ${fmtBytes(idleMemory.externalBytes)}` : 'not reported' },
        { metric: 'submit time / peak RSS overall', value: `${fmtMs(submittedMs)} / ${fmtBytes(rss.maxBytes)}` },
        {
          metric: 'cancel all: request answered / all terminal / no process left',
          value: `${stop.requestMs === null ? 'no answer' : fmtMs(stop.requestMs)} / ${stop.allTerminalMs === null ? 'timeout' : fmtMs(stop.allTerminalMs)} / ${stop.noProcessMs === null ? `${stop.leftover} left` : fmtMs(stop.noProcessMs)}`,
          pass: stop.leftover === 0 && stop.allTerminalMs !== null ? null : false,
        },
      ],
      data: {
        jobs: n,
        submittedMs: round(submittedMs),
        allRunningMs: round(allRunningMs),
        allRunningAfterLastSubmitMs: round(afterSubmitMs),
        steadyWindowMs: round(w1 - w0),
        cpuMs: round(c1 - c0),
        launcherCpuMs: round(l1 - l0),
        startCpuMs: round(startCpuMs),
        startCpuPerJobMs: round(startCpuMs / n, 3),
        startLauncherCpuMs: round(startLauncherCpuMs),
        machineStartCpuPerJobMs: round(machineStartMs / n, 2),
        cpuPct: round(cpuPct, 2),
        rssIdleBefore: idleRss,
        rssSteady: steady,
        diskBytesPerMinSteady: round(diskPerMin),
        walBytesPerMinSteady: round(walPerMin),
        rssOverall: rss,
        memoryIdle: idleMemory,
        memorySteady: steadyMemory,
        attemptProcesses: procs,
        jobsMemoryBytes: jobsMemory,
        stop,
        profile: ctx.profile ? { start: start.profile, steady: steadyProf.profile, cancel: stopW.profile } : undefined,
      },
      notes,
    };
  }
}
