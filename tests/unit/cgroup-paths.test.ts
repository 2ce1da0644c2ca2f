/**
 * Which control groups the local executor uses and what it writes there (docs/design.md §7
 * "Limits"), from /proc/self/mountinfo as machines print it. cgroup v1 is exercised for real in
 * tests/integration/local-limits.test.ts (this machine's hierarchy); no cgroup v2 hierarchy with
 * controllers is available here, so the v2 paths and files are checked against a fake tree in a
 * temporary folder — the same functions, plain files instead of the kernel's. And the Slurm
 * side of the limits: --mem and --time, and the end states that are limits.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attemptCgroupDirs, cgroupName, createAttemptCgroup, detectCgroups, oomKills, parseMountinfo, prepareCgroups } from '../../lib/executors/local/cgroup';
import { localLimitsFromEnv } from '../../lib/executors/local/limits';
import { limitOfJob, limitOfState, parseScontrolJob, slurmExitCode } from '../../lib/executors/slurm/cli';
import { limitArgs } from '../../lib/executors/slurm/launch';

/** This machine's mounts (a hybrid layout: v1 controllers, an empty unified mount). */
const HYBRID = [
  '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct',
  '34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '35 30 0:32 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices',
  '38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');
/** A current distribution's (systemd, pure v2). */
const UNIFIED = '29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot';
/** An older one with cpu and cpuacct mounted together. */
const COMOUNTED = '25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n26 24 0:23 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-cgroup-paths-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('which cgroups', () => {
  it('reads the cgroup mounts of mountinfo', () => {
    expect(parseMountinfo(HYBRID).map((m) => [m.point, m.fstype])).toContainEqual(['/sys/fs/cgroup/unified', 'cgroup2']);
    expect(parseMountinfo(COMOUNTED)[0].options).toEqual(['rw', 'cpu', 'cpuacct']);
  });

  it('v1 on a hybrid machine (its unified mount has no controllers), v2 where it has them, none without memory', () => {
    const read = (f: string) => (f === '/sys/fs/cgroup/cgroup.controllers' ? 'cpuset cpu io memory hugetlb pids rdma misc\n' : f === '/sys/fs/cgroup/unified/cgroup.controllers' ? '\n' : null);
    expect(detectCgroups(HYBRID, 'jobdeck', read)).toMatchObject({ version: 1, mounts: { memory: '/sys/fs/cgroup/memory', cpu: '/sys/fs/cgroup/cpu', cpuacct: '/sys/fs/cgroup/cpuacct', pids: '/sys/fs/cgroup/pids', devices: '/sys/fs/cgroup/devices' } });
    expect(detectCgroups(UNIFIED, 'jobdeck', read)).toMatchObject({ version: 2, mount: '/sys/fs/cgroup' });
    expect(detectCgroups(COMOUNTED, 'jobdeck', read)).toMatchObject({ version: 1, mounts: { cpu: '/sys/fs/cgroup/cpu,cpuacct', cpuacct: '/sys/fs/cgroup/cpu,cpuacct' } });
    expect(detectCgroups('', 'jobdeck', read)).toEqual({ version: null, reason: 'no cgroup memory controller is mounted' });
  });

  it('not writable: jobs run without limits, and the status says so and why', () => {
    const ro = path.join(tmp, 'ro');
    mkdirSync(ro);
    writeFileSync(path.join(ro, 'memory'), 'a file, not a hierarchy');
    const s = prepareCgroups({ version: 1, mounts: { memory: path.join(ro, 'memory') }, parent: 'jobdeck' });
    expect(s.version).toBeNull();
    expect(localLimitsFromEnv({ JOBDECK_CGROUPS: 'off' }).status).toEqual({
      cgroups: null,
      enforced: [],
      notes: ['attempts run without limits: control groups are off (JOBDECK_CGROUPS=off); resources.memory, resources.cpus and the GPU devices are not enforced on the local executor (admission still counts them)'],
    });
    expect(() => localLimitsFromEnv({ JOBDECK_CGROUPS: 'maybe' })).toThrow(/^JOBDECK_CGROUPS: expected auto or off/);
    expect(() => localLimitsFromEnv({ JOBDECK_CGROUP_PARENT: '../x' })).toThrow(/^JOBDECK_CGROUP_PARENT/);
    expect(() => localLimitsFromEnv({ JOBDECK_ATTEMPT_PIDS_MAX: '3' })).toThrow(/^JOBDECK_ATTEMPT_PIDS_MAX/);
  });
});

describe('cgroup v2 (a fake tree: no v2 hierarchy with controllers on this machine)', () => {
  const mount = path.join(tmp, 'unified');
  mkdirSync(mount);
  writeFileSync(path.join(mount, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  const support = detectCgroups(`29 23 0:26 / ${mount} rw - cgroup2 cgroup2 rw`, 'jobdeck/attempts', (f) => readFileSync(f, 'utf8'));

  it('hands memory, cpu and pids down to the parent group, level by level', () => {
    expect(prepareCgroups(support)).toBe(support);
    for (const dir of [mount, path.join(mount, 'jobdeck'), path.join(mount, 'jobdeck', 'attempts')]) expect(readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +cpu +pids');
    expect(localLimitsFromEnv({ JOBDECK_CGROUP_PARENT: 'jobdeck/attempts' }, `29 23 0:26 / ${mount} rw - cgroup2 cgroup2 rw`).status).toMatchObject({ cgroups: 'v2', enforced: ['memory', 'cpu', 'pids'] });
  });

  it("writes the attempt's limits: memory.max, no swap, cpu.max, pids.max; records where for the enter step and the wrapper", async () => {
    const attemptDir = path.join(tmp, 'attempt');
    mkdirSync(attemptDir);
    const group = path.join(mount, 'jobdeck', 'attempts', cgroupName(attemptDir));
    mkdirSync(group, { recursive: true });
    writeFileSync(path.join(group, 'memory.swap.max'), 'max\n'); // the kernel makes it; here the test does
    if (support.version !== 2) throw new Error('expected v2');
    const g = await createAttemptCgroup(support, attemptDir, { memoryBytes: 512 * 1024 * 1024, cpus: 1.5, pidsMax: 100, deniedGpus: [0] });
    const file = (f: string) => readFileSync(path.join(group, f), 'utf8');
    expect([file('memory.max'), file('memory.swap.max'), file('cpu.max'), file('pids.max')]).toEqual(['536870912', '0', '150000 100000', '100']);
    // v2 has no devices files: the GPU device files are not restricted there (the status says so).
    expect(g).toEqual({ dirs: [group], oomFile: path.join(group, 'memory.events'), cpuFile: path.join(group, 'cpu.stat'), enforced: ['memory', 'cpu', 'pids'] });
    expect(attemptCgroupDirs(attemptDir)).toEqual([group]);
    expect(readFileSync(path.join(attemptDir, 'cgroup.oom'), 'utf8')).toBe(`${group}/memory.events\n`);
    expect(oomKills('low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n')).toBe(1);
    expect(oomKills('oom_kill_disable 0\nunder_oom 0\noom_kill 2\n')).toBe(2);
    expect(oomKills(null)).toBe(0);
  });
});

describe('Slurm: the limits are its own', () => {
  it('--mem per node in MiB and --time in whole minutes, both rounded up', () => {
    expect(limitArgs({ memoryBytes: 8 * 1024 ** 3, maxDurationMs: 7_200_000 })).toEqual(['--mem=8192M', '--time=120']);
    expect(limitArgs({ memoryBytes: 1.5 * 1024 ** 2 + 1, maxDurationMs: 5000 })).toEqual(['--mem=2M', '--time=1']);
    expect(limitArgs({})).toEqual([]);
  });

  it('TIMEOUT and OUT_OF_MEMORY are limits (a task failure, never a recovery); the rest are not', () => {
    const line = 'JobId=41 JobName=jobdeck-3-0-1 UserId=root(0) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) ExitCode=0:15 Command=/x/batch.sh /x WorkDir=/x';
    const info = parseScontrolJob(line)!;
    expect([limitOfState(info.state), slurmExitCode(info)]).toEqual(['time', 143]);
    expect(limitOfState('OUT_OF_MEMORY')).toBe('memory');
    // While Slurm stops it (when the wrapper records the SIGTERM), the job is COMPLETING with the reason TimeLimit.
    expect(limitOfJob({ state: 'COMPLETING', reason: 'TimeLimit' })).toBe('time');
    expect(limitOfJob({ state: 'COMPLETING', reason: 'NonZeroExitCode' })).toBeNull();
    for (const s of ['NODE_FAIL', 'PREEMPTED', 'FAILED', 'CANCELLED', 'COMPLETED']) expect(limitOfState(s)).toBeNull();
  });
});
