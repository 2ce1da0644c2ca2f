import { recordDirOf } from '../attempt-record';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ACTIVE_STATES, groupMarkOf, jobIdOf, jobSteps, runSlurm, viewJob } from './cli';
import { isGang, STOP_FILE } from './gang';
import { cancelGroupTask } from './group';
import type { AttemptHandle } from '../types';

/**
 * Stopping a Slurm attempt with scancel and waiting until the controller no longer shows its job
 * active. Which signals reach which processes is Slurm's business (its ProctrackType); this
 * decides the order — TERM to everything, KILL to the batch step after the grace period, then
 * the job — because a plain `scancel --signal=KILL` is a job cancel that waits for KillWait
 * (measured; docs/slurm.md, "Cancel"). A multi-node attempt's TERM goes to its steps only (every
 * rank on every node), one step at a time (`scancel --signal=TERM <job>.<step>`: a signal, where
 * a job-level one is a cancel that waits for KillWait), not to its batch script: srun, when
 * signalled, kills its tasks at once, without the grace. A stop file keeps the batch script from
 * starting a further step. A task of a job group's heterogeneous job is stopped alone
 * (lib/executors/slurm/group.ts cancelGroupTask).
 */

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Cancels the Slurm job of `handle`: a pending one at once; a running one with TERM, then after
 * `graceMs` (default 10 000 ms) KILL. Resolves when scontrol no longer shows it active; polls
 * every `pollMs`. A handle naming no Slurm job, or a job already ended, is a no-op.
 * @throws SlurmUnavailableError when the controller does not answer; Error when the job is still
 *   active 60 s after scancel.
 */
export async function cancelSlurmJob(handle: AttemptHandle, pollMs: number, cancelOpts: { graceMs?: number } = {}): Promise<void> {
  const graceMs = cancelOpts.graceMs ?? 10_000;
  const id = jobIdOf(handle);
  if (id === null) return;
  // A task of a job group's heterogeneous job: only its own step and component (group.ts).
  const group = groupMarkOf(handle.attemptDir);
  if (group !== null) return cancelGroupTask(handle, group, pollMs, graceMs, markStop);
  const activeState = async (): Promise<string | null> => {
    const v = await viewJob(id, handle.attemptDir);
    return v.kind === 'known' && ACTIVE_STATES.has(v.info.state) ? v.info.state : null;
  };
  const waitInactive = async (untilMs: number): Promise<boolean> => {
    for (;;) {
      if ((await activeState()) === null) return true;
      const left = untilMs - Date.now();
      if (left <= 0) return false;
      await sleep(Math.min(pollMs, left));
    }
  };
  // scancel errors ("already completing or completed") are not failures: the state decides.
  const scancel = (args: string[]) => runSlurm('scancel', [...args, id], { timeoutMs: 30_000 });

  const state = await activeState();
  if (state === null) return;
  if (state === 'PENDING' || state === 'REQUEUE_HOLD' || state === 'RESV_DEL_HOLD' || state === 'REQUEUED') {
    await scancel([]);
  } else if (isGang(handle.attemptDir)) {
    markStop(recordDirOf(handle.attemptDir));
    if (await termSteps(id, activeState, Date.now() + graceMs, pollMs)) return;
    await scancel(['--batch', '--signal=KILL']);
    await scancel([]);
  } else {
    await scancel(['--signal=TERM', '--full']);
    if (await waitInactive(Date.now() + graceMs)) return;
    // SIGKILL now. (`scancel --signal=KILL` without --batch is a job cancel in Slurm: TERM,
    // then KILL only after the cluster's KillWait — measured.)
    await scancel(['--batch', '--signal=KILL']);
    await scancel([]);
  }
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (await waitInactive(Math.min(Date.now() + 2000, deadline))) return;
    if (Date.now() >= deadline) throw new Error(`Slurm executor: job ${id} is still ${await activeState()} 60 s after scancel`);
    await scancel(['--batch', '--signal=KILL']);
  }
}

/**
 * Leaves the stop file in a multi-node attempt's folder (best effort: the signals decide). Made
 * new or not at all (O_EXCL: a name the job's account made is never followed).
 */
function markStop(dir: string): void {
  try {
    writeFileSync(path.join(dir, STOP_FILE), '', { flag: 'wx' });
  } catch {
    /* the folder is gone or read-only: the steps are signalled anyway */
  }
}

/**
 * TERM to every step of a multi-node attempt's job (each once; a step started meanwhile too)
 * until the job is no longer active or `untilMs` passes. @returns true when it ended.
 */
async function termSteps(id: string, activeState: () => Promise<string | null>, untilMs: number, pollMs: number): Promise<boolean> {
  const signalled = new Set<string>();
  for (;;) {
    for (const step of await jobSteps(id)) {
      if (signalled.has(step)) continue;
      signalled.add(step);
      await runSlurm('scancel', ['--signal=TERM', step], { timeoutMs: 30_000 });
    }
    if ((await activeState()) === null) return true;
    const left = untilMs - Date.now();
    if (left <= 0) return false;
    await sleep(Math.min(pollMs, left));
  }
}
