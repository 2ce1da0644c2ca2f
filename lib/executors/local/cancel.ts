import { cgroupPids } from './cgroup';
import { identity } from './handle';
import { isLiveState, readProcStat, sendSignal, type ProcScanner } from './proc';
import type { AttemptHandle } from '../types';

/**
 * Stopping a local attempt: SIGTERM to its whole process group (and to members that moved to
 * another group of its session), SIGKILL after the grace period, until no process of it is left.
 * Kept apart because it is the one place that sends signals, and every guard against signalling
 * a process that is not the attempt's (pid reuse, a pid that leads no group) is here. As with Ray
 * and SkyPilot, which also kill by process group, a process that calls setsid() itself escapes
 * (docs/design.md, "Executors").
 */

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Stops every process of the attempt `handle` names: SIGTERM, then after `graceMs` (default
 * 10 000 ms) SIGKILL, repeated while a member forks; resolves once none is left. On a finished
 * attempt it costs one scan and sends nothing — or no scan at all when the attempt has a control
 * group (`cgroupDirs`, its `cgroup` file) and both the group and the process group are empty
 * (finishedAndEmpty). Scans come from `scanner`: a burst of cancels (cancel all) shares one scan
 * per round instead of each rescanning /proc.
 * @throws Error when the pid does not lead its own process group (not something launch()
 *   started), or when processes of the attempt survive SIGKILL for 30 s.
 */
export async function cancelProcessGroup(handle: AttemptHandle, scanner: ProcScanner, cancelOpts: { graceMs?: number; cgroupDirs?: readonly string[] } = {}): Promise<void> {
  const graceMs = cancelOpts.graceMs ?? 10_000;
  const { pid, startTime } = identity(handle);
  if (pid === null) return;
  const leader = readProcStat(pid);
  // The pid now belongs to another process: the number could only be reused once no process had
  // it as its group or session any more, so nothing of the attempt is left to stop.
  if (leader && leader.startTime !== startTime) return;
  // Alive and ours, but not the leader of its own group: not something launch() started.
  if (leader && (leader.pgrp !== pid || pid === process.pid)) {
    throw new Error(`local executor: refusing to cancel ${handle.ref}: process ${pid} does not lead its own process group`);
  }
  // A finished attempt (the wrapper gone or a zombie): the common case when the monitor reaps
  // leftovers after every attempt's end. The first scan below finds nothing and nothing is sent.
  const finished = !leader || !isLiveState(leader.state);
  if (finished && finishedAndEmpty(pid, cancelOpts.cgroupDirs ?? [])) return;

  // A scan yields to the event loop.
  const signalAll = async (signal: NodeJS.Signals): Promise<number> => {
    const members = (await scanner.fresh()).members(pid);
    if (members.length === 0) return 0;
    if (finished) {
      // The number may have been reused during the scan (only possible once the group was
      // empty): then these members are another process's, not ours to signal.
      const again = readProcStat(pid);
      if (again && again.startTime !== startTime) return 0;
    }
    sendSignal(-pid, signal);
    // Processes that moved to another group of the attempt's session.
    for (const p of members) if (p.pgrp !== pid) sendSignal(p.pid, signal);
    return members.length;
  };
  const waitEmpty = async (untilMs: number): Promise<boolean> => {
    let step = 20;
    for (;;) {
      if ((await scanner.recent(20)).members(pid).length === 0) return true;
      const left = untilMs - Date.now();
      if (left <= 0) return false;
      await sleep(Math.min(step, left));
      step = Math.min(step * 1.5, 250);
    }
  };

  if ((await signalAll('SIGTERM')) === 0) return;
  if (await waitEmpty(Date.now() + graceMs)) return;
  const killDeadline = Date.now() + 30_000;
  for (;;) {
    // Repeat: a process may have forked between the scan and the signal.
    if ((await signalAll('SIGKILL')) === 0) return;
    if (await waitEmpty(Math.min(Date.now() + 500, killDeadline))) return;
    if (Date.now() >= killDeadline) {
      const left = (await scanner.fresh()).members(pid).map((p) => `${p.pid} (${p.comm}, state ${p.state})`);
      throw new Error(`local executor: processes of attempt ${handle.ref} survive SIGKILL: ${left.join(', ')}`);
    }
  }
}

/**
 * Whether a finished attempt certainly left nothing, without a `/proc` scan (a scan reads every
 * process of the machine: ~25 µs each, so 100 ms at 4,000 processes — and a burst of job ends
 * would scan back to back). True only when the attempt has control groups, none holds a process,
 * and no process is left in its process group (`kill(-pid, 0)`: ESRCH). Every process the task
 * starts is in its groups (the enter step joins them before it runs the task, and only root can
 * move a process out); what the wrapper itself starts outside them (its log pump) stays in its
 * process group. So a session member outside both would have to have left the group on its own
 * — as with setsid, the escape docs/design.md §6 "Leftovers" names. Anything else (no groups, a
 * group not empty, EPERM) answers false: the scan decides.
 */
export function finishedAndEmpty(pid: number, cgroupDirs: readonly string[]): boolean {
  if (cgroupDirs.length === 0) return false;
  try {
    if (sendSignal(-pid, 0)) return false;
  } catch {
    return false;
  }
  return cgroupPids(cgroupDirs).length === 0;
}
