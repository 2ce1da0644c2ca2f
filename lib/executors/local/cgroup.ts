import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, type Dirent } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * Control groups for local attempts (docs/design.md §7 "Limits"): each attempt gets its own group,
 * under `<hierarchy>/<JOBDECK_CGROUP_PARENT, default jobdeck>/<name from its folder>`, holding its
 * memory (swap included), its CPU time (a CFS quota), its process count and, where the devices
 * controller is there, which GPU device files it may open. cgroup v2 where the machine mounts its
 * controllers there (`cgroup.controllers`), v1 otherwise (one hierarchy per controller). The
 * attempt's processes join the group through the enter step (lib/executors/local/enter.ts); the
 * wrapper stays outside it, so an OOM kill never takes the wrapper, and reads the group's OOM
 * count for the exit record. The group goes when the attempt's reap is done (removeAttemptCgroup).
 * A launch's writes go through the libuv thread pool (a handful per launch: bench/README.md
 * "cgroups"); detection and preparation, once at start, are synchronous.
 */

/** The controllers an attempt's group uses. */
const V1_CONTROLLERS = ['memory', 'cpu', 'cpuacct', 'pids', 'devices'] as const;
type V1Controller = (typeof V1_CONTROLLERS)[number];

/** What this machine offers (detectCgroups). */
export type CgroupSupport =
  | { version: 2; mount: string; parent: string; controllers: Set<string> }
  | { version: 1; mounts: Partial<Record<V1Controller, string>>; parent: string }
  | { version: null; reason: string };

/** The limits of one attempt's group. */
export interface CgroupLimits {
  /** `resources.memory` in bytes (swap included); absent: none. */
  memoryBytes?: number;
  /** `resources.cpus`: a CFS quota of cpus × the period. */
  cpus: number;
  /** Most processes (and threads) at once. */
  pidsMax: number;
  /** The GPU devices (indices of /dev/nvidia<i>, major 195) the attempt may not open: the executor's ones not granted to it. */
  deniedGpus?: readonly number[];
}

/** Where an attempt's group is: one folder per hierarchy, the file its OOM kills are counted in, its CPU time. */
export interface AttemptCgroup {
  dirs: string[];
  /** `memory.oom_control` (v1) or `memory.events` (v2): a line `oom_kill N`. */
  oomFile: string;
  /** `cpuacct.usage` (v1, ns) or `cpu.stat` (v2, `usage_usec N`). */
  cpuFile: string | null;
  /** Controllers whose limits were written (memory, cpu, pids, devices). */
  enforced: string[];
}

/** The names of the files the enter step and the wrapper read, in the attempt folder. */
export const CGROUP_FILE = 'cgroup';
export const OOM_FILE = 'cgroup.oom';

/** CFS period (µs): the quota is cpus × this. */
const CFS_PERIOD_US = 100_000;
/** NVIDIA's character-device major (/dev/nvidia<N> is 195:N). */
const NVIDIA_MAJOR = 195;

interface Mount {
  point: string;
  fstype: string;
  options: string[];
}

/** The cgroup mounts of a `/proc/self/mountinfo` text. */
export function parseMountinfo(text: string): Mount[] {
  const out: Mount[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const point = left.split(' ')[4];
    const [fstype, , superOpts = ''] = right.split(' ');
    if (fstype === 'cgroup' || fstype === 'cgroup2') out.push({ point: point.replace(/\\040/g, ' '), fstype, options: superOpts.split(',') });
  }
  return out;
}

/**
 * Which cgroup version this machine offers for attempts (see the module comment): v2 when its
 * unified mount has the memory controller, else v1 when a memory hierarchy is mounted; neither:
 * `version: null` with the reason. Pure over `mountinfo` and `read` (tests give a fake tree).
 */
export function detectCgroups(mountinfo: string, parent: string, read: (file: string) => string | null = readOrNull): CgroupSupport {
  const mounts = parseMountinfo(mountinfo);
  const v2 = mounts.find((m) => m.fstype === 'cgroup2');
  if (v2) {
    const controllers = new Set((read(path.join(v2.point, 'cgroup.controllers')) ?? '').trim().split(/\s+/).filter(Boolean));
    if (controllers.has('memory')) return { version: 2, mount: v2.point, parent, controllers };
  }
  const v1: Partial<Record<V1Controller, string>> = {};
  for (const m of mounts.filter((x) => x.fstype === 'cgroup')) for (const c of V1_CONTROLLERS) if (m.options.includes(c)) v1[c] ??= m.point;
  if (v1.memory) return { version: 1, mounts: v1, parent };
  return { version: null, reason: v2 ? 'the cgroup v2 hierarchy has no memory controller, and no v1 memory hierarchy is mounted' : 'no cgroup memory controller is mounted' };
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The folders (one per hierarchy) of group `rel` under the parent. */
function dirsOf(s: Exclude<CgroupSupport, { version: null }>, rel: string): Partial<Record<V1Controller | 'unified', string>> {
  if (s.version === 2) return { unified: path.join(s.mount, s.parent, rel) };
  const out: Partial<Record<V1Controller, string>> = {};
  for (const [c, mount] of Object.entries(s.mounts) as Array<[V1Controller, string]>) out[c] = path.join(mount, s.parent, rel);
  return out;
}

/**
 * Makes the parent group(s) and checks that jobdeck may write there (root, or a delegated
 * tree); on v2 also enables the memory, cpu and pids controllers for the children. Answers the
 * support to use: `version: null` with the reason when it cannot (EACCES: not root…).
 */
export function prepareCgroups(s: CgroupSupport): CgroupSupport {
  if (s.version === null) return s;
  try {
    if (s.version === 2) {
      const parent = path.join(s.mount, s.parent);
      mkdirSync(parent, { recursive: true });
      const wanted = ['memory', 'cpu', 'pids'].filter((c) => s.controllers.has(c));
      // Each level from the mount down must hand the controllers on.
      const rel = s.parent.split('/').filter(Boolean);
      for (let i = 0; i <= rel.length; i++) {
        const dir = path.join(s.mount, ...rel.slice(0, i));
        writeFileSync(path.join(dir, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
      }
    } else {
      for (const dir of new Set(Object.values(dirsOf(s, '')))) mkdirSync(dir, { recursive: true });
    }
    return s;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EROFS' ? `jobdeck may not create control groups (${e.code}: run it as root, or give it a delegated cgroup tree)` : `cannot prepare control groups: ${e.message}`;
    return { version: null, reason: why };
  }
}

/** The group's name for an attempt folder: stable (found again after a restart), unique per folder. */
export function cgroupName(attemptDir: string): string {
  return `attempt-${createHash('sha256').update(path.resolve(attemptDir)).digest('hex').slice(0, 20)}`;
}

function put(dir: string, file: string, value: string): Promise<void> {
  return fsp.writeFile(path.join(dir, file), value);
}

/**
 * Creates the attempt's group with its limits (an existing one — a launch tried again — is
 * reused and its limits written again) and records where it is in the attempt folder for the
 * enter step (`cgroup`: one folder a line) and the wrapper (`cgroup.oom`: the OOM count's file).
 * @throws Error when a folder or a limit cannot be written (the launch fails: nothing pretends).
 */
export async function createAttemptCgroup(s: Exclude<CgroupSupport, { version: null }>, attemptDir: string, limits: CgroupLimits): Promise<AttemptCgroup> {
  const d = dirsOf(s, cgroupName(attemptDir));
  const dirs = [...new Set(Object.values(d))];
  await Promise.all(dirs.map((dir) => fsp.mkdir(dir, { recursive: true })));
  const enforced = await (s.version === 2 ? limitV2(s, d.unified!, limits) : limitV1(d, limits));
  const mem = s.version === 2 ? d.unified! : d.memory!;
  const oomFile = path.join(mem, s.version === 2 ? 'memory.events' : 'memory.oom_control');
  const cpuFile = s.version === 2 ? path.join(d.unified!, 'cpu.stat') : d.cpuacct ? path.join(d.cpuacct, 'cpuacct.usage') : null;
  await Promise.all([fsp.writeFile(path.join(attemptDir, CGROUP_FILE), dirs.map((x) => `${x}\n`).join('')), fsp.writeFile(path.join(attemptDir, OOM_FILE), `${oomFile}\n`)]);
  return { dirs, oomFile, cpuFile, enforced };
}

/** The CFS quota of `cpus` cores per period (µs), at least 1 ms. */
const quotaOf = (cpus: number) => String(Math.max(1000, Math.round(cpus * CFS_PERIOD_US)));

/** Writes a v2 group's limits; answers what it enforces. */
async function limitV2(s: Extract<CgroupSupport, { version: 2 }>, u: string, limits: CgroupLimits): Promise<string[]> {
  const enforced: string[] = [];
  if (limits.memoryBytes !== undefined && s.controllers.has('memory')) {
    await put(u, 'memory.max', String(limits.memoryBytes));
    // v2 counts swap apart: none at all keeps the limit "swap included".
    if (existsSync(path.join(u, 'memory.swap.max'))) await put(u, 'memory.swap.max', '0');
    enforced.push('memory');
  }
  if (s.controllers.has('cpu')) {
    await put(u, 'cpu.max', `${quotaOf(limits.cpus)} ${CFS_PERIOD_US}`);
    enforced.push('cpu');
  }
  if (s.controllers.has('pids')) {
    await put(u, 'pids.max', String(limits.pidsMax));
    enforced.push('pids');
  }
  return enforced;
}

/** Writes a v1 group's limits, one hierarchy each (in parallel); answers what it enforces. */
async function limitV1(d: Partial<Record<V1Controller | 'unified', string>>, limits: CgroupLimits): Promise<string[]> {
  const jobs: Array<Promise<string | null>> = [];
  if (limits.memoryBytes !== undefined) {
    const m = d.memory!;
    const bytes = String(limits.memoryBytes);
    jobs.push(
      (async () => {
        // The memory limit first: memsw (memory + swap) may never be below it.
        await put(m, 'memory.limit_in_bytes', bytes);
        if (existsSync(path.join(m, 'memory.memsw.limit_in_bytes'))) await put(m, 'memory.memsw.limit_in_bytes', bytes);
        return 'memory';
      })(),
    );
  }
  const cpu = d.cpu;
  if (cpu) jobs.push(put(cpu, 'cpu.cfs_period_us', String(CFS_PERIOD_US)).then(() => put(cpu, 'cpu.cfs_quota_us', quotaOf(limits.cpus))).then(() => 'cpu'));
  if (d.pids) jobs.push(put(d.pids, 'pids.max', String(limits.pidsMax)).then(() => 'pids'));
  const devices = d.devices;
  if (devices && limits.deniedGpus) {
    jobs.push(
      (async () => {
        for (const i of limits.deniedGpus!) await put(devices, 'devices.deny', `c ${NVIDIA_MAJOR}:${i} rwm`);
        return 'devices';
      })(),
    );
  }
  return (await Promise.all(jobs)).filter((x): x is string => x !== null);
}

/** The group folders an attempt folder records (its `cgroup` file); empty when it has none. */
export function attemptCgroupDirs(attemptDir: string): string[] {
  const text = readOrNull(path.join(attemptDir, CGROUP_FILE));
  return text ? text.split('\n').filter((l) => l.startsWith('/')) : [];
}

/** The processes in an attempt's groups now (those that left its process group too: setsid). */
export function cgroupPids(dirs: readonly string[]): number[] {
  const pids = new Set<number>();
  for (const dir of dirs) for (const l of (readOrNull(path.join(dir, 'cgroup.procs')) ?? '').split('\n')) if (/^\d+$/.test(l)) pids.add(Number(l));
  return [...pids];
}

/** `oom_kill N` of a memory.oom_control / memory.events text (0 when absent). */
export function oomKills(text: string | null): number {
  const m = text ? /^oom_kill (\d+)$/m.exec(text) : null;
  return m ? Number(m[1]) : 0;
}

/**
 * Removes an attempt's groups once nothing is in them (the reap's last step; the attempt folder
 * keeps its `cgroup` file: a later reap finds the groups gone). A group that still has a process
 * (it escaped its process group with setsid) is left; the next reap tries again.
 * @returns the folders that could not be removed.
 */
export async function removeAttemptCgroup(attemptDir: string): Promise<string[]> {
  const left: string[] = [];
  await Promise.all(
    attemptCgroupDirs(attemptDir).map(async (dir) => {
      if (!(await removeGroupTree(dir))) left.push(dir);
    }),
  );
  return left;
}

/**
 * Removes a group and the empty groups below it, deepest first (a container runtime makes its
 * own below the attempt's: docs/design.md §7 "Containers"). @returns false when one still holds
 * a process (or cannot be removed); true when the group is gone.
 */
export async function removeGroupTree(dir: string): Promise<boolean> {
  let entries: Dirent[];
  try {
    entries = await fsp.readdir(dir, { withFileTypes: true });
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
  for (const e of entries) if (e.isDirectory()) await removeGroupTree(path.join(dir, e.name));
  try {
    await fsp.rmdir(dir);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Every cgroup hierarchy's mount point on this machine (v1: one per controller set; v2: one). */
export function cgroupMounts(): string[] {
  try {
    return parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8')).map((m) => m.point);
  } catch {
    return [];
  }
}
