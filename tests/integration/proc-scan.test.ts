import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../lib/executors/local/executor';
import { createProcScanner, liveMembers, type ProcStat } from '../../lib/executors/local/proc';
import type { AttemptHandle } from '../../lib/executors/types';

/**
 * The coalescing /proc scanner (lib/executors/local/proc.ts createProcScanner) that concurrent cancels
 * share (bench/README.md, fixes table: "Cancel many jobs"). Scans are counted through the injectable onScan/scan hooks, never
 * by timing; the processes are real.
 */

const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-proc-scan-'));
const spawned: ChildProcess[] = [];
afterAll(() => {
  for (const c of spawned) if (c.pid) try { process.kill(-c.pid, 'SIGKILL'); } catch { /* gone */ }
  rmSync(root, { recursive: true, force: true });
});

/** A real `sleep` in its own session and process group (as an attempt's wrapper is). */
function detachedSleep(): number {
  const c = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  spawned.push(c);
  return c.pid!;
}

async function waitFor(what: string, cond: () => boolean, limitMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('createProcScanner', () => {
  it('200 concurrent fresh() calls share one real /proc scan, and each finds the group', async () => {
    const pid = detachedSleep();
    let scans = 0;
    const scanner = createProcScanner({ onScan: () => scans++ });
    const snaps = await Promise.all(Array.from({ length: 200 }, () => scanner.fresh()));
    expect(scans).toBe(1);
    expect(scanner.scans).toBe(1);
    for (const s of snaps) expect(s.members(pid).map((p) => p.pid)).toEqual([pid]);
    // The index answers exactly what the uncached full-table filter answers. Compared by identity
    // only: between two reads a live process may change its state (R/S), its CPU times and RSS, and
    // — caught between fork and exec — its name.
    const stable = (ps: ProcStat[]) => ps.map(({ pid, ppid, pgrp, session, startTime }) => ({ pid, ppid, pgrp, session, startTime }));
    expect(stable(snaps[0].members(pid))).toEqual(stable(liveMembers(pid, 0)));
    expect(snaps[0].members(process.pid)).toEqual(snaps[0].list.filter((p) => (p.pgrp === process.pid || p.session === process.pid) && p.state !== 'Z'));
  });

  it('a caller arriving while a scan runs gets a scan that starts after its call (one more, shared)', async () => {
    const gates: Array<ReturnType<typeof deferred<ProcStat[]>>> = [];
    const scanner = createProcScanner({
      scan: () => {
        const d = deferred<ProcStat[]>();
        gates.push(d);
        return d.promise;
      },
    });
    const first = Promise.all(Array.from({ length: 100 }, () => scanner.fresh()));
    await waitFor('the first scan to start', () => gates.length === 1);
    // 100 more arrive while the first scan is running: they must not get its (older) result.
    const second = Promise.all(Array.from({ length: 100 }, () => scanner.fresh()));
    const a: ProcStat = { pid: 11, comm: 'a', state: 'S', ppid: 1, pgrp: 11, session: 11, startTime: '1', utime: 0, stime: 0, cutime: 0, cstime: 0, rssPages: 0 };
    const b: ProcStat = { pid: 12, comm: 'b', state: 'S', ppid: 1, pgrp: 11, session: 11, startTime: '2', utime: 0, stime: 0, cutime: 0, cstime: 0, rssPages: 0 };
    gates[0].resolve([a]);
    const r1 = await first;
    await waitFor('the second scan to start', () => gates.length === 2);
    gates[1].resolve([a, b, { ...a, pid: 13, state: 'Z' }]);
    const r2 = await second;
    expect(scanner.scans).toBe(2);
    for (const s of r1) expect(s.members(11).map((p) => p.pid)).toEqual([11]);
    for (const s of r2) expect(s.members(11).map((p) => p.pid)).toEqual([11, 12]); // zombie 13 ignored
    // recent(): reuses the latest snapshot while young enough; otherwise scans again.
    expect(await scanner.recent(60_000)).toBe(r2[0]);
    const third = scanner.recent(-1);
    await waitFor('a third scan to start', () => gates.length === 3);
    gates[2].resolve([]);
    expect((await third).members(11)).toEqual([]);
    expect(scanner.scans).toBe(3);
  });

  it('a failing scan rejects its callers; the next call scans again', async () => {
    let n = 0;
    const scanner = createProcScanner({
      scan: async () => {
        if (++n === 1) throw new Error('boom');
        return [];
      },
    });
    const r = await Promise.allSettled([scanner.fresh(), scanner.fresh()]);
    expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected']);
    expect((await scanner.fresh()).list).toEqual([]);
    expect(scanner.scans).toBe(2);
  });
});

describe('local executor cancel through a shared scanner', () => {
  it('16 concurrent cancels stop every group and share scans (fewer than one per attempt)', async () => {
    let scans = 0;
    const scanner = createProcScanner({ onScan: () => scans++ });
    const ex = createLocalExecutor({ procScanner: scanner });
    const n = 16;
    const handles: AttemptHandle[] = [];
    for (let i = 0; i < n; i++) {
      const dir = path.join(root, `a${i}`);
      const logPath = path.join(dir, 'logs', 'attempt.log');
      handles.push(
        await ex.launch({ jobId: 1, taskIndex: 0, attempt: i + 1, setup: null, run: 'echo up; sleep 1000', envs: {}, workdir: null, cpus: 1, attemptDir: path.join(dir, 'attempt'), logPath }),
      );
      await waitFor('the run to start', () => {
        try {
          return readFileSync(logPath, 'utf8').includes('up');
        } catch {
          return false;
        }
      });
    }
    for (const h of handles) expect(liveMembers(h.pid!, 0).length).toBeGreaterThan(0);
    await Promise.all(handles.map((h) => ex.cancel(h, { graceMs: 30_000 })));
    for (const h of handles) expect(liveMembers(h.pid!, 0)).toEqual([]);
    // Unshared, every cancel needs at least two scans (signal round + emptiness check): 2n.
    expect(scans).toBeGreaterThan(0);
    expect(scans).toBeLessThan(n);
  });
});
