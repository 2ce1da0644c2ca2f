import { closeSync, openSync, readFileSync, readSync, statfsSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * One process's entry in the Linux process table (`/proc/<pid>/stat`): read by the local
 * executor (lib/executors/local/proc.ts) and by the data-folder lock (lib/db/lock.ts), which checks
 * that the lock's holder still runs. Synchronous and cheap; nothing throws for a process that is
 * gone.
 */

/** The fields of `/proc/<pid>/stat` jobdeck relies on (proc(5)). */
export interface ProcStat {
  pid: number;
  /** Executable name as the kernel shows it (may contain spaces and parentheses). */
  comm: string;
  /** One letter: R running, S sleeping, D disk sleep, T stopped, Z zombie, X dead, … */
  state: string;
  ppid: number;
  /** Process group id (field 5). */
  pgrp: number;
  /** Session id (field 6). */
  session: number;
  /** Start time in clock ticks since boot (field 22), as a decimal string: the pid-reuse guard. */
  startTime: string;
  /**
   * CPU time in clock ticks (USER_HZ): user and system of the process itself (fields 14, 15) and
   * of its children it has waited for (fields 16, 17) — what a finished child leaves behind.
   */
  utime: number;
  stime: number;
  cutime: number;
  cstime: number;
  /** Resident set size in pages (field 24). */
  rssPages: number;
}

/**
 * Parses the text of `/proc/<pid>/stat`. The second field (comm) is wrapped in parentheses and
 * may itself contain spaces and `)`, so the fields after it are split after the LAST `)`.
 * @returns null when the text is not a stat line.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 1 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const comm = text.slice(open + 1, close);
  // Fields after comm start at field 3 (state): rest[0] = field 3, so field N = rest[N - 3].
  const rest = text.slice(close + 1).trim().split(/\s+/);
  if (!Number.isInteger(pid) || rest.length < 22) return null;
  const startTime = rest[22 - 3];
  if (!/^\d+$/.test(startTime)) return null;
  return {
    pid,
    comm,
    state: rest[0],
    ppid: Number(rest[4 - 3]),
    pgrp: Number(rest[5 - 3]),
    session: Number(rest[6 - 3]),
    startTime,
    utime: Number(rest[14 - 3]),
    stime: Number(rest[15 - 3]),
    cutime: Number(rest[16 - 3]),
    cstime: Number(rest[17 - 3]),
    rssPages: Number(rest[24 - 3]),
  };
}

/** One read's room for a stat line: ~300 bytes with a 15-byte comm; a longer line is read whole. */
const STAT_BUFFER = Buffer.alloc(4096);

/**
 * Reads `/proc/<pid>/stat`: one open, one read into a buffer kept for it, one close (readFileSync
 * also asks the size, which procfs does not know, and reads again to see the end: ~15 % more CPU
 * over a 4,000-process table).
 * @returns null when no such process exists (or it just vanished).
 */
export function readProcStat(pid: number): ProcStat | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const file = `/proc/${pid}/stat`;
  let text: string;
  try {
    const fd = openSync(file, 'r');
    try {
      const got = readSync(fd, STAT_BUFFER, 0, STAT_BUFFER.length, 0);
      text = got < STAT_BUFFER.length ? STAT_BUFFER.toString('utf8', 0, got) : readFileSync(file, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  return parseProcStat(text);
}

/**
 * True for a process that can still run code. A zombie (`Z`, exited, waiting for its parent to
 * reap it) or a dead task (`X`/`x`) is not alive. Zombies matter here: the container's PID 1 may
 * never reap orphans, so a finished process can stay a zombie forever.
 */
export function isLiveState(state: string): boolean {
  return state !== 'Z' && state !== 'X' && state !== 'x';
}

/**
 * Whether the filesystem holding `dir` is full, as the kernel says (statfs): "the disk is full"
 * (no block left for an unprivileged writer), "the disk has no free inodes", or null when there
 * is room or `dir` cannot be examined. Read by the local executor (an attempt that could not
 * write its exit record) and by GET /api/health (degraded). Cheap: one syscall.
 */
export function diskFull(dir: string): string | null {
  try {
    const fs = statfsSync(dir);
    if (fs.bavail === 0) return 'the disk is full';
    if (fs.ffree === 0) return 'the disk has no free inodes';
  } catch {
    // gone or not examinable: nothing to say
  }
  return null;
}

let hostIdCache: string | null = null;

/**
 * This host's identity: the host name and the kernel's boot id (`/proc/sys/kernel/random/boot_id`).
 * Processes with the same one share `/proc`: a local attempt's pid means the same process, and
 * the host's CPUs are theirs (docs/design.md "Replicas"). Read once per process.
 */
export function hostIdentity(): string {
  if (hostIdCache === null) {
    let boot = 'unknown';
    try {
      boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      /* not Linux: the host name alone */
    }
    hostIdCache = `${hostname()}/${boot}`;
  }
  return hostIdCache;
}

/**
 * Whether process `pid` exists on this host: signal 0 reaches it, or is refused (EPERM: it runs
 * as someone else). Anything else — ESRCH — means it is gone. Cheap; never throws.
 */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
