/**
 * Measure 6 — recovery. 1,000 running `sleep` jobs (capacity check off), `kill -9` of the server,
 * a new server on the same JOBDECK_HOME (and database, and token). Measured from the new
 * process's spawn: until it listens, and until every job is re-adopted — RUNNING with its one
 * attempt in the REST list (and, when the server has it, per GET /api/monitor). Checked: no job
 * lost (every one RUNNING, no recovery counted), none re-run (exactly one attempt each; the
 * attempt's original process — pid + start time from its handle.json — still alive). Finally
 * every job is cancelled through the new server: that all end and no process remains shows the
 * new monitor really controls the adopted attempts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { attemptDir } from '../lib/jobs/paths';
import type { JobSummary } from '../lib/api/types';
import type { MonitorState } from '../lib/monitor/state';
import type { Measure, MeasureResult } from './lib/context';
import { listAll } from './lib/client';
import { cancelEverything, submitMany, waitAllStatus } from './lib/jobs';
import { procStart } from './lib/proc';
import { startBenchServer, type BenchServer } from './lib/server';
import { fmtMs, nowMs, round, sleep } from './lib/util';

interface Handle {
  pid: number;
  pidStartTime: string;
}

function readHandle(home: string, id: number): Handle | null {
  try {
    const h = JSON.parse(readFileSync(path.join(attemptDir(id, 0, 1, home), 'handle.json'), 'utf8')) as Partial<Handle>;
    return typeof h.pid === 'number' && typeof h.pidStartTime === 'string' ? { pid: h.pid, pidStartTime: h.pidStartTime } : null;
  } catch {
    return null;
  }
}

function alive(h: Handle | null): boolean {
  if (!h) return false;
  const p = procStart(h.pid);
  return !!p && p.startTime === h.pidStartTime && p.state !== 'Z';
}

/** Is the job adopted as it was: RUNNING, one attempt, no restart or recovery. */
function intact(j: JobSummary): boolean {
  return j.status === 'RUNNING' && j.tasks.length === 1 && j.tasks[0].attempts === 1 && j.recoveryCount === 0 && j.restartCount === 0;
}

/** GET /api/monitor (MonitorState), or null when the server does not answer it. */
async function monitorView(s: BenchServer): Promise<MonitorState | null> {
  try {
    const res = await s.api('/api/monitor');
    if (!res.ok) return null;
    return (await res.json()) as MonitorState;
  } catch {
    return null;
  }
}

export const recovery: Measure = {
  name: 'recovery',
  title: 'Recovery after kill -9',
  async run(ctx): Promise<MeasureResult> {
    const n = ctx.quick ? 40 : 1000;
    const env = { JOBDECK_CAPACITY_CHECK: '0' };
    const first = await startBenchServer({ label: 'recovery-before', env });
    ctx.log(`recovery: ${n} × sleep 3600…`);
    const ids = await submitMany(first, n, 'sleep 3600', 16, 'recovery');
    await waitAllStatus(first, null, ids, 'RUNNING', 180_000, 250);
    const handles = new Map(ids.map((id) => [id, readHandle(first.home, id)]));
    const aliveBefore = ids.filter((id) => alive(handles.get(id)!)).length;
    const monitorBefore = await monitorView(first);

    ctx.log('recovery: kill -9 of the server, restart on the same home…');
    await first.kill9();
    await sleep(200);
    const aliveAfterKill = ids.filter((id) => alive(handles.get(id)!)).length;
    const second = await startBenchServer({ label: 'recovery-after', home: first.home, token: first.token, env, lifeProfile: ctx.profile });
    const t0 = second.spawnedAtMs;
    const listenMs = second.startupMs;
    let adoptedMs: number | null = null;
    let last: JobSummary[] = [];
    let monitorAfter: MonitorState | null = null;
    const want = new Set(ids);
    // Re-adopted: every job RUNNING with its one attempt (REST), and the monitor says it
    // re-adopted them all and follows them (when it answers GET /api/monitor).
    while (nowMs() - t0 < 60_000) {
      last = (await listAll(second)).filter((j) => want.has(j.id));
      monitorAfter = await monitorView(second);
      const monitorOk = !monitorAfter || (monitorAfter.running && monitorAfter.readopted >= n && monitorAfter.jobsWatched >= n);
      if (last.length === n && last.every(intact) && monitorOk) {
        adoptedMs = nowMs() - t0;
        break;
      }
      await sleep(20);
    }
    const lost = n - last.filter((j) => j.status === 'RUNNING').length;
    const rerun = last.filter((j) => (j.tasks[0]?.attempts ?? 0) > 1 || j.recoveryCount > 0 || j.restartCount > 0).length;
    const survived = ids.filter((id) => alive(handles.get(id)!)).length;

    ctx.log('recovery: cancelling all through the new server…');
    const stop = await cancelEverything(second, 90_000);
    await second.stop();

    const notes: string[] = [];
    if (aliveBefore !== n) notes.push(`only ${aliveBefore} of ${n} attempt processes found alive (handle.json pid + start time) before the kill`);
    if (aliveAfterKill !== aliveBefore) notes.push(`${aliveBefore - aliveAfterKill} attempt processes died with the server`);
    if (stop.leftover) notes.push(`${stop.leftover} processes survived the cancel (killed by the bench)`);
    const byStatus: Record<string, number> = {};
    for (const j of last) byStatus[j.status] = (byStatus[j.status] ?? 0) + 1;
    return {
      rows: [
        { metric: `all ${n} re-adopted (from restart spawn)`, value: adoptedMs === null ? 'not within 60 s' : fmtMs(adoptedMs), target: '< 5 s', pass: adoptedMs !== null && adoptedMs < 5000 },
        { metric: 'of which: until listening', value: fmtMs(listenMs), target: '< 3 s', pass: listenMs < 3000 },
        { metric: 'lost / re-run', value: `${lost} / ${rerun}`, target: '0 / 0', pass: lost === 0 && rerun === 0 },
        { metric: 'original processes alive after restart', value: `${survived} of ${n}`, pass: survived === n ? null : false },
        { metric: 'cancel via new server → all terminal / no process', value: `${stop.allTerminalMs === null ? 'timeout' : fmtMs(stop.allTerminalMs)} / ${stop.noProcessMs === null ? `${stop.leftover} left` : fmtMs(stop.noProcessMs)}`, pass: stop.allTerminalMs !== null && stop.leftover === 0 ? null : false },
      ],
      data: {
        jobs: n,
        listenMs: round(listenMs),
        adoptedMs: adoptedMs === null ? null : round(adoptedMs),
        lost,
        rerun,
        byStatus,
        aliveBefore,
        aliveAfterKill,
        survived,
        monitorBefore,
        monitorAfter,
        stop,
        profile: second.lifeProfile(),
      },
      notes,
    };
  },
};
