import { readFileSync } from 'node:fs';
import { identity } from './handle';
import type { ProcScanner, ProcSnapshot } from './proc';
import type { AttemptHandle, UsageSample } from '../types';

/**
 * Resource usage of local attempts from one look at the process table (docs/design.md §7,
 * "Resource usage"): every process of the attempt's process group or session (the wrapper's pid,
 * as cancel finds them), its CPU time — its own and that of the children it has waited for, so a
 * finished step of the task still counts — and its resident memory.
 */

/**
 * Clock ticks per second of `/proc/<pid>/stat`'s CPU fields: USER_HZ, which the kernel fixes at
 * 100 on every architecture Linux exports to user space (CONFIG_HZ does not change it).
 */
export const USER_HZ = 100;

let pageBytes: number | null = null;

/**
 * The page size `/proc/<pid>/stat`'s rss is counted in: this process's resident size in bytes
 * (process.memoryUsage) over its resident pages (`/proc/self/statm`), rounded to a power of two
 * (4096 on x86-64; 16 or 64 KiB on some arm64 kernels). Computed once.
 */
export function pageSize(): number {
  if (pageBytes !== null) return pageBytes;
  let size = 4096;
  try {
    const pages = Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]);
    const ratio = process.memoryUsage.rss() / pages;
    if (pages > 0 && ratio > 0) size = 2 ** Math.round(Math.log2(ratio));
  } catch {
    // no /proc/self/statm: keep the common page size
  }
  pageBytes = size;
  return size;
}

/** The usage of one attempt in a snapshot; null when none of its processes is left. */
export function attemptUsage(snap: ProcSnapshot, handle: AttemptHandle): UsageSample | null {
  const { pid } = identity(handle);
  if (pid === null) return null;
  const members = snap.members(pid);
  if (members.length === 0) return null;
  let ticks = 0;
  let pages = 0;
  let n = 0;
  for (const p of members) {
    // The wrapper's log pump (docs/design.md §8) is jobdeck's, not the task's: a child of the
    // wrapper named perl is always it (setup and run start as bash or the enter step).
    if (p.ppid === pid && p.comm === 'perl') continue;
    ticks += p.utime + p.stime + p.cutime + p.cstime;
    pages += p.rssPages;
    n++;
  }
  return { cpuMs: (ticks * 1000) / USER_HZ, rssBytes: pages * pageSize(), procs: n };
}

/** Executor.sample for local attempts: one fresh scan shared by every handle. */
export async function sampleLocal(scanner: ProcScanner, handles: readonly AttemptHandle[]): Promise<Array<UsageSample | null>> {
  if (handles.length === 0) return [];
  const snap = await scanner.fresh();
  return handles.map((h) => attemptUsage(snap, h));
}
