import { logger } from '../../log';
import { attemptCgroupDirs, cgroupPids, removeAttemptCgroup } from './cgroup';
import { sendSignal } from './proc';

/**
 * The last step of stopping a local attempt (after its process group is gone: local/cancel.ts):
 * its control group. A process still in the group left the attempt's process group and session
 * (it called setsid itself) — the group still knows it, so it is stopped too (SIGTERM, the grace,
 * SIGKILL) — then the group is removed. Only processes listed in the attempt's own group are
 * signalled: they are the attempt's, whatever their pid. Nothing to do for an attempt without a
 * group (no `cgroup` file: none could be made, or an earlier reap removed it).
 */

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitEmpty(dirs: readonly string[], untilMs: number): Promise<boolean> {
  for (let step = 20; ; step = Math.min(step * 1.5, 250)) {
    if (cgroupPids(dirs).length === 0) return true;
    if (Date.now() >= untilMs) return false;
    await sleep(Math.min(step, Math.max(1, untilMs - Date.now())));
  }
}

function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      sendSignal(pid, signal);
    } catch {
      /* EPERM: not ours to signal (cannot happen for a group jobdeck made); the removal says so */
    }
  }
}

/**
 * Stops what is left in the attempt's control group and removes the group (see the module
 * comment). Never throws: a group that cannot be removed is logged, and the next reap of the
 * attempt tries again.
 */
export async function stopCgroup(attemptDir: string, graceMs: number): Promise<void> {
  const dirs = attemptCgroupDirs(attemptDir);
  if (dirs.length === 0) return;
  const left = cgroupPids(dirs);
  if (left.length > 0) {
    signalAll(left, 'SIGTERM');
    if (!(await waitEmpty(dirs, Date.now() + graceMs))) {
      signalAll(cgroupPids(dirs), 'SIGKILL');
      await waitEmpty(dirs, Date.now() + 5000);
    }
  }
  const kept = await removeAttemptCgroup(attemptDir);
  if (kept.length) logger().warn({ attemptDir, groups: kept }, `local executor: could not remove the attempt's control group ${kept.join(', ')} (a process is still in it)`);
}
