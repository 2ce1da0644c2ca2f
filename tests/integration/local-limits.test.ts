import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { attemptCgroupDirs } from '../../lib/executors/local/cgroup';
import { createLocalExecutor, type LocalExecutor } from '../../lib/executors/local/executor';
import { createProcScanner, isLiveState, readProcStat } from '../../lib/executors/local/proc';
import { localLimitsFromEnv } from '../../lib/executors/local/limits';
import { parseLocalGpus } from '../../lib/jobs/gpus';
import type { AttemptHandle, LaunchRequest } from '../../lib/executors/types';
import { ended, testLaunchRequest, waitFor } from './executor-helpers';

/**
 * The local executor's limits on real control groups (docs/design.md §7 "Limits"): this machine
 * has a cgroup v1 hierarchy writable as root, which CI runs as. Memory past `resources.memory` is
 * killed by the kernel and reported from the group's own OOM count (never guessed from 137), a
 * neighbour untouched; `cpus: 0.5` is held to half a core by the CFS quota (the group's own CPU
 * time, and the kernel's throttle count); the process cap; GPU device files not granted are
 * closed; the wrapper stays outside the group; the reap removes the group and stops what escaped
 * the process group. Each group lives under a parent of this file's own, removed at the end.
 */

const parent = `jobdeck-test-limits-${process.pid}`;
const limits = localLimitsFromEnv({ JOBDECK_CGROUP_PARENT: parent, JOBDECK_ATTEMPT_PIDS_MAX: '64' });
const usable = process.getuid?.() === 0 && limits.support.version !== null;
const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-limits-'));
let seq = 0;
const launched: Array<{ ex: LocalExecutor; h: AttemptHandle }> = [];

afterEach(async () => {
  for (const { ex, h } of launched.splice(0)) await ex.cancel(h, { graceMs: 100 });
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  if (limits.support.version === 1) for (const m of new Set(Object.values(limits.support.mounts))) rmdirSync(path.join(m, parent), { recursive: false } as never);
  if (limits.support.version === 2) rmdirSync(path.join(limits.support.mount, parent));
});

async function launch(ex: LocalExecutor, over: Partial<LaunchRequest>) {
  const req = testLaunchRequest(path.join(root, `a${++seq}`), over);
  const h = await ex.launch(req);
  launched.push({ ex, h });
  return { req, h };
}

const log = (req: LaunchRequest) => (existsSync(req.logPath) ? readFileSync(req.logPath, 'utf8') : '');
/** The attempt's group folder of one controller (v1: the hierarchy mounted for it). */
const groupOf = (req: LaunchRequest, controller: string) => attemptCgroupDirs(req.attemptDir).find((d) => d.split('/').includes(controller))!;
const MB = 1024 * 1024;

describe('local executor limits on cgroup v1 (root)', () => {
  beforeAll(() => {
    // A right that is missing fails the suite, never skips it (docs/testing.md).
    if (!usable) throw new Error(`these tests need root and a cgroup hierarchy: ${limits.status.notes.join('; ')}`);
  });
  const ex = createLocalExecutor({ pollMs: 200, limits, gpus: parseLocalGpus('2')!, launcher: null });

  it('says what it enforces', () => {
    expect(ex.limits!()).toEqual({ cgroups: limits.support.version === 2 ? 'v2' : 'v1', enforced: ['memory', 'cpu', 'pids', 'devices'], notes: [] });
  });

  it('past its memory: killed by the kernel, reported as the limit from the OOM count; the neighbour and the wrapper untouched', async () => {
    const hog = await launch(ex, { memoryBytes: 64 * MB, run: 'echo start; perl -e \'$x = "a" x (256*1024*1024); print "allocated\\n"\'; rc=$?; echo after $rc; exit $rc' });
    const calm = await launch(ex, { memoryBytes: 64 * MB, run: 'perl -e \'$x = "a" x (8*1024*1024); sleep 1; print "calm\\n"\'' });
    const r = await ended(ex, hog.h);
    // The perl process died (137), the run script went on and ended with that code; the
    // wrapper (outside the group) wrote the record with the group's count.
    expect(log(hog.req)).toMatch(/^start\n.*Killed.*\nafter 137\n$/);
    expect(r).toMatchObject({ state: 'exited', phase: 'run', exitCode: 137, limit: 'memory' });
    expect(JSON.parse(readFileSync(path.join(hog.req.attemptDir, 'exit'), 'utf8')).oomKills).toBeGreaterThanOrEqual(1);
    expect(await ended(ex, calm.h)).toMatchObject({ state: 'exited', exitCode: 0 });
    expect('limit' in (await ex.probe(calm.h))).toBe(false);
    expect(log(calm.req)).toBe('calm\n');
    expect(readFileSync(path.join(groupOf(hog.req, 'memory'), 'memory.limit_in_bytes'), 'utf8').trim()).toBe(String(64 * MB));
  });

  it('an exit 137 without an OOM kill is no memory limit', async () => {
    const { h } = await launch(ex, { memoryBytes: 64 * MB, run: 'kill -9 $$' });
    const r = await ended(ex, h);
    expect(r).toMatchObject({ state: 'exited', exitCode: 137 });
    expect('limit' in r).toBe(false);
  });

  it('cpus: 0.5 holds two busy loops to about half a core, measured from the group itself', async () => {
    const go = path.join(root, 'go');
    const { req, h } = await launch(ex, { cpus: 0.5, run: `while [ ! -e ${go} ]; do sleep 0.05; done; for i in 1 2; do ( end=$((SECONDS+3)); while [ $SECONDS -lt $end ]; do :; done ) & done; wait` });
    const usage = path.join(groupOf(req, 'cpuacct'), 'cpuacct.usage');
    const stat = path.join(groupOf(req, 'cpu'), 'cpu.stat');
    // On a loaded machine the group's fair share alone may stay under half a core, and the quota
    // would have nothing to hold: a large weight (test only) lets the loops want two cores. The
    // weight counts among siblings, so it goes on this file's parent (against the machine's other
    // processes) as well as on the attempt's group.
    const cpuGroup = groupOf(req, 'cpu');
    for (const g of [path.dirname(cpuGroup), cpuGroup]) writeFileSync(path.join(g, 'cpu.shares'), '262144');
    const t0 = process.hrtime.bigint();
    writeFileSync(go, '');
    await ended(ex, h, 60_000);
    const wallNs = Number(process.hrtime.bigint() - t0);
    const usedNs = Number(readFileSync(usage, 'utf8').trim());
    const throttled = Number(/^nr_throttled (\d+)$/m.exec(readFileSync(stat, 'utf8'))?.[1] ?? 0);
    expect(readFileSync(path.join(groupOf(req, 'cpu'), 'cpu.cfs_quota_us'), 'utf8').trim()).toBe('50000');
    // Two loops could use two cores: the quota holds them to half of one (a busy machine gives
    // less, never more), and the kernel says it throttled the group.
    expect(usedNs / wallNs).toBeLessThan(0.65);
    expect(usedNs / wallNs).toBeGreaterThan(0.05);
    expect(throttled).toBeGreaterThan(0);
  });

  it('caps the processes an attempt may have at once', async () => {
    const fork = 'my @k; for (1..100) { my $p = fork(); last unless defined $p; if (!$p) { sleep 30; exit 0 } push @k, $p } print "started ", scalar(@k), "\\n"; kill 9, @k; waitpid($_, 0) for @k';
    const { req, h } = await launch(ex, { run: `perl -e '${fork}'` });
    await ended(ex, h);
    const started = Number(/started (\d+)/.exec(log(req))?.[1]);
    expect(started).toBeGreaterThan(0);
    expect(started).toBeLessThan(64);
  });

  it('closes the GPU device files not granted to the attempt (devices controller)', async () => {
    const dev = path.join(root, 'dev');
    mkdirSync(dev, { recursive: true });
    for (const i of [0, 1]) execFileSync('mknod', [path.join(dev, `nvidia${i}`), 'c', '195', String(i)]);
    const granted = { type: 'A100', count: 1, devices: [{ index: 1, share: 1 }] };
    const { req, h } = await launch(ex, { gpus: granted, run: `for i in 0 1; do cat ${dev}/nvidia$i 2>&1 | sed "s|.*: |$i: |"; done; echo "$CUDA_VISIBLE_DEVICES"` });
    await ended(ex, h);
    // No driver here: the granted device answers "no such device"; the other one is refused by the group.
    expect(log(req)).toBe('0: Operation not permitted\n1: No such device or address\n1\n');
  });

  it('runs setup and run through the enter step: they are in the group, the wrapper is not', async () => {
    const { req, h } = await launch(ex, { run: 'cat /proc/self/cgroup | grep ":memory:"; sleep 30' });
    await waitFor('run to print its group', () => log(req).includes(':memory:'));
    const group = groupOf(req, 'memory');
    expect(log(req)).toContain(`:memory:${group.slice(group.indexOf(`/${parent}/`))}`);
    const wrapper = readFileSync(`/proc/${h.pid}/cgroup`, 'utf8');
    expect(wrapper).not.toContain(parent);
    expect(existsSync(path.join(req.attemptDir, 'enter.sh'))).toBe(true);
  });

  it('the reap stops what escaped the process group (setsid) and removes the group', async () => {
    const marker = path.join(root, 'escaped.pid');
    const { req, h } = await launch(ex, { run: `setsid sh -c 'echo $$ > ${marker}; sleep 300' & sleep 0.5` });
    await ended(ex, h);
    const escaped = Number(readFileSync(marker, 'utf8'));
    expect(existsSync(`/proc/${escaped}`)).toBe(true);
    const dirs = attemptCgroupDirs(req.attemptDir);
    expect(dirs.length).toBeGreaterThan(0);
    await ex.cancel(h, { graceMs: 200 });
    // Gone, or a zombie waiting for its new parent (the machine's init) to reap it.
    const st = readProcStat(escaped);
    expect(st === null || !isLiveState(st.state)).toBe(true);
    for (const d of dirs) expect(existsSync(d)).toBe(false);
  });

  // docs/design.md §6 "Leftovers": an empty group and process group need no look at the process table.
  describe('the reap of a finished attempt', () => {
    let scans = 0;
    const counted = createLocalExecutor({ pollMs: 200, limits, gpus: parseLocalGpus('2')!, launcher: null, procScanner: createProcScanner({ onScan: () => scans++ }) });

    it('that left nothing reads no process table, and removes the group', async () => {
      const { req, h } = await launch(counted, { run: 'echo done' });
      await ended(counted, h);
      const dirs = attemptCgroupDirs(req.attemptDir);
      expect(dirs.length).toBeGreaterThan(0);
      scans = 0;
      await counted.cancel(h, { graceMs: 200 });
      expect(scans).toBe(0);
      for (const d of dirs) expect(existsSync(d)).toBe(false);
    });

    it('that left a process in its process group still finds and stops it', async () => {
      const marker = path.join(root, 'left.pid');
      const { req, h } = await launch(counted, { run: `sleep 300 & echo $! > ${marker}` });
      await ended(counted, h);
      const left = Number(readFileSync(marker, 'utf8'));
      expect(isLiveState(readProcStat(left)?.state ?? 'X')).toBe(true);
      scans = 0;
      await counted.cancel(h, { graceMs: 200 });
      expect(scans).toBeGreaterThan(0);
      const st = readProcStat(left);
      expect(st === null || !isLiveState(st.state)).toBe(true);
      for (const d of attemptCgroupDirs(req.attemptDir)) expect(existsSync(d)).toBe(false);
    });
  });
});
