import { readFileSync } from 'node:fs';
import path from 'node:path';
import { HANDLE_FILE } from '../attempt-record';
import { hostIdentity } from '../../proc';
import type { AttemptHandle } from '../types';

/**
 * A local attempt's handle: the wrapper's pid and its start time (`ref` = "pid:starttime", the
 * guard against pid reuse), and the copy launch() leaves in the attempt folder. Probe, watch and
 * cancel work from the handle alone, so a fresh executor after a jobdeck restart finds every
 * attempt again (docs/design.md, "Executors").
 */

/**
 * Reads the handle copy launch() leaves in the attempt folder: lets recovery find an attempt whose
 * handle never reached the database (jobdeck died right after the spawn).
 * @returns null when absent or unreadable.
 */
export function readHandleFile(attemptDir: string): AttemptHandle | null {
  try {
    const h = JSON.parse(readFileSync(path.join(attemptDir, HANDLE_FILE), 'utf8')) as AttemptHandle;
    return h && h.executor === 'local' && typeof h.ref === 'string' ? h : null;
  } catch {
    return null;
  }
}

/** The handle of a wrapper started as `pid` at `startTime` (the launcher writes the same fields). */
export function handleOf(pid: number, startTime: string, attemptDir: string): AttemptHandle {
  return { executor: 'local', ref: `${pid}:${startTime}`, pid, pidStartTime: startTime, hostId: hostIdentity(), attemptDir };
}

/**
 * pid and start time of a handle: its fields, or parsed from `ref` ("pid:starttime").
 * `pid` is null when the handle names no process that may be signalled (never 0 or 1).
 */
export function identity(handle: AttemptHandle): { pid: number | null; startTime: string | null } {
  let pid = handle.pid ?? null;
  let startTime = handle.pidStartTime ?? null;
  const m = /^(\d+):(\d+)$/.exec(handle.ref ?? '');
  if (m) {
    pid ??= Number(m[1]);
    startTime ??= m[2];
  }
  // Never 0 or 1: kill(-1) would signal every process of the user, kill(0) our own group.
  return { pid: pid && Number.isSafeInteger(pid) && pid > 1 ? pid : null, startTime };
}
