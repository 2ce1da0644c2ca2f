/**
 * Measure 13 — what an attempt's control group costs per launch (docs/design.md §7 "Limits").
 * In-process, no server, no build: on this machine's cgroup hierarchy (as root), N attempt
 * folders each get their group made with a memory limit, a CPU quota, the process cap and two
 * GPU device files closed (lib/executors/local/cgroup.ts createAttemptCgroup: what a launch
 * does before the spawn), then removed as the reap removes it (cgroup-stop.ts stopCgroup on an
 * empty group). p50/p95 of each, one at a time, under a parent of the bench's own. The time a
 * whole launch takes with groups on is the `concurrent` measure run with and without
 * `--server-env=JOBDECK_CGROUPS=off`.
 */
import { mkdirSync, mkdtempSync, rmSync, rmdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAttemptCgroup } from '../lib/executors/local/cgroup';
import { stopCgroup } from '../lib/executors/local/cgroup-stop';
import { localLimitsFromEnv } from '../lib/executors/local/limits';
import type { Measure, MeasureResult } from './lib/context';
import { fmtMs, nowMs, round } from './lib/util';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

export const cgroups: Measure = {
  name: 'cgroups',
  title: 'Control group per launch',
  async run(ctx): Promise<MeasureResult> {
    const n = ctx.quick ? 100 : 500;
    const parent = `jobdeck-bench-${process.pid}`;
    const limits = localLimitsFromEnv({ JOBDECK_CGROUP_PARENT: parent });
    const s = limits.support;
    if (s.version === null) return { rows: [{ metric: 'control groups', value: `not available: ${s.reason}` }], data: { available: false, reason: s.reason }, notes: [] };
    const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-bench-cgroups-'));
    const make: number[] = [];
    const remove: number[] = [];
    try {
      ctx.log(`cgroups: ${n} groups on cgroup v${s.version}…`);
      for (let i = 0; i < n; i++) {
        const dir = path.join(root, `a${i}`);
        mkdirSync(dir);
        const t0 = nowMs();
        await createAttemptCgroup(s, dir, { memoryBytes: 512 * 1024 * 1024, cpus: 1, pidsMax: limits.pidsMax, deniedGpus: [0, 1] });
        const t1 = nowMs();
        await stopCgroup(dir, 1000);
        make.push(t1 - t0);
        remove.push(nowMs() - t1);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
      const mounts = s.version === 2 ? [s.mount] : [...new Set(Object.values(s.mounts))];
      for (const m of mounts) rmdirSync(path.join(m, parent));
    }
    return {
      rows: [
        { metric: `make an attempt's group with its limits (v${s.version}), p50 / p95`, value: `${fmtMs(pct(make, 50))} / ${fmtMs(pct(make, 95))}` },
        { metric: 'remove it at the reap (empty), p50 / p95', value: `${fmtMs(pct(remove, 50))} / ${fmtMs(pct(remove, 95))}` },
      ],
      data: { version: s.version, groups: n, makeMs: { p50: round(pct(make, 50), 3), p95: round(pct(make, 95), 3) }, removeMs: { p50: round(pct(remove, 50), 3), p95: round(pct(remove, 95), 3) } },
      notes: [],
    };
  },
};
