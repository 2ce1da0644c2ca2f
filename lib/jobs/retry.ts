/**
 * The restart and recovery decisions: pure functions, the one place that decides what happens
 * after an attempt ends. The monitor (lib/monitor) applies what they return.
 *
 * Restart (the user's own failure). From SkyPilot's "retry each task" fix (docs/design.md §5
 * rules 9–10): the decision is taken right after an attempt of ANY task of a pipeline ends
 * FAILED (run exited non-zero) or FAILED_SETUP (setup exited non-zero):
 *  1. the exit code is in `job_recovery.recover_on_exit_codes` → restart, NOT counted against the
 *     budget (SkyPilot's recover_on_exit_codes; applies to the code of whichever phase failed;
 *     not to an attempt a limit stopped — out of memory, max_duration — whose code is the stop's);
 *  2. else the task's restarts so far < `max_restarts_on_errors` → restart, counted;
 *  3. else the job ends with that failure (FAILED or FAILED_SETUP); later tasks never start.
 * A restart waits `restart_backoff` first (jobdeck's key; SkyPilot restarts at once, but its
 * relaunch takes minutes, ours milliseconds): the base for the first attempt's failure, doubling
 * for each later attempt of the task, capped — so a task that fails at once does not spin.
 *
 * Recovery (the executor lost the attempt: process vanished without recording an exit status,
 * or it could not be launched): not the user's fault, never spends the restart budget. Bounded by
 * `maxRecoveries` per task (JOBDECK_MAX_RECOVERIES, default 3) with exponential backoff; past the
 * bound the job ends FAILED_CONTROLLER — jobdeck (the controller) could not keep the task running.
 */

/** The user's restart policy of one task (job_recovery in the YAML). */
export interface RestartPolicy {
  /** `max_restarts_on_errors`: counted restarts allowed per task (≥ 0). */
  maxRestartsOnErrors: number;
  /** `recover_on_exit_codes`: exit codes (0–255) that restart without spending the budget. */
  recoverOnExitCodes: readonly number[];
  /** The wait before the restart after attempt 1 (ms): `restart_backoff`, else the server's default; absent: 0. */
  backoffMs?: number;
  /** Cap of the doubling wait (ms; JOBDECK_MAX_RESTART_BACKOFF_MS); a larger `backoffMs` is kept as it is. */
  maxBackoffMs?: number;
}

/** An attempt that ended with the user's own failure. */
export interface FailedAttempt {
  status: 'FAILED' | 'FAILED_SETUP';
  /** The failing phase's exit code (null when unknown). */
  exitCode: number | null;
  /** A multi-node attempt's failing rank (the first failure), named in the reason. */
  rank?: number;
  /** The attempt's number (1-based, per task): the restart after attempt n waits backoff · 2^(n−1). Absent: 1. */
  number?: number;
  /**
   * Why it failed when a limit stopped it ("out of memory: limit 8 GB", "exceeded max_duration
   * 2h", lib/jobs/limits.ts): said instead of the exit code. Still the user's own failure —
   * restarted under max_restarts_on_errors, never recovered.
   */
  cause?: string;
}

/** What to do after a FAILED / FAILED_SETUP attempt. */
export type RestartDecision =
  /**
   * Start a new attempt of the same task, `delayMs` after the failed one ended; `counted` →
   * task.restarts++ and job.restartCount++.
   */
  | { action: 'restart'; counted: boolean; reason: string; delayMs: number }
  /** End the job with `status`; later tasks become CANCELLED and never start. */
  | { action: 'fail'; status: 'FAILED' | 'FAILED_SETUP'; reason: string };

function describe(a: FailedAttempt): string {
  const what = a.status === 'FAILED_SETUP' ? 'setup' : 'run';
  const rank = a.rank !== undefined ? `rank ${a.rank}: ` : '';
  if (a.cause) return `${rank}${a.cause}`;
  return a.exitCode === null ? `${rank}${what} failed` : `${rank}${what} exited with code ${a.exitCode}`;
}

/**
 * The restart decision (see the module comment).
 * @param attempt the failed attempt's status and exit code
 * @param restartsSoFar counted restarts this task already spent (Task.restarts)
 * @param policy the task's job_recovery
 */
export function decideRestart(attempt: FailedAttempt, restartsSoFar: number, policy: RestartPolicy): RestartDecision {
  const what = describe(attempt);
  const delayMs = restartDelayMs(attempt.number ?? 1, policy);
  const wait = delayMs > 0 ? ` after ${waitText(delayMs)}` : '';
  // A limit's stop is the budget's to restart, whatever code the stop left (143, 137).
  if (!attempt.cause && attempt.exitCode !== null && policy.recoverOnExitCodes.includes(attempt.exitCode)) {
    return { action: 'restart', counted: false, delayMs, reason: `${what}; code ${attempt.exitCode} is in recover_on_exit_codes: restart${wait} (not counted)` };
  }
  const max = Math.max(0, Math.floor(policy.maxRestartsOnErrors));
  if (restartsSoFar < max) {
    return { action: 'restart', counted: true, delayMs, reason: `${what}: restart ${restartsSoFar + 1} of ${max}${wait}` };
  }
  const tail = max === 0 ? 'no restarts allowed (max_restarts_on_errors: 0)' : `restarts spent (${restartsSoFar} of ${max})`;
  return { action: 'fail', status: attempt.status, reason: `${what}; ${tail}` };
}

/**
 * The wait before the restart that follows attempt `n` (1-based) of a task: backoffMs · 2^(n−1),
 * capped at maxBackoffMs — but never below backoffMs (a spec asking for more than the server's
 * cap keeps its own value). 0 without a backoff. Pure.
 */
export function restartDelayMs(n: number, policy: Pick<RestartPolicy, 'backoffMs' | 'maxBackoffMs'>): number {
  const base = Math.max(0, policy.backoffMs ?? 0);
  if (base === 0) return 0;
  const k = Math.max(0, Math.floor(n) - 1);
  return Math.max(base, Math.min(policy.maxBackoffMs ?? Infinity, base * 2 ** Math.min(k, 30)));
}

/** A wait in words for a reason: "500 ms", "30 s", "2 min", "1.5 h". */
function waitText(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 6000) / 10} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

/** How the monitor bounds recoveries. */
export interface RecoveryPolicy {
  /** Recoveries allowed per task (JOBDECK_MAX_RECOVERIES, default 3). */
  maxRecoveries: number;
  /** Delay before the first recovery attempt, ms (JOBDECK_RECOVERY_BACKOFF_MS, default 1000). */
  backoffMs: number;
  /** Upper bound of the delay, ms (default 60 000). */
  maxBackoffMs: number;
}

/** What to do after the executor lost an attempt. */
export type RecoveryDecision =
  /** Mark the attempt LOST, the task RECOVERING, and start a new attempt after `delayMs`. */
  | { action: 'recover'; delayMs: number; reason: string }
  /** Give up: the task and the job end FAILED_CONTROLLER. */
  | { action: 'fail'; status: 'FAILED_CONTROLLER'; reason: string };

/**
 * The delay before recovery number `n` (1-based) of a task: backoffMs · 2^(n−1), capped at
 * maxBackoffMs. Pure.
 */
export function recoveryDelayMs(n: number, policy: Pick<RecoveryPolicy, 'backoffMs' | 'maxBackoffMs'>): number {
  const k = Math.max(0, Math.floor(n) - 1);
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.min(k, 30));
}

/**
 * The recovery decision.
 * @param lostReason why the executor says the attempt is lost (kept in the reason)
 * @param recoveriesSoFar recoveries this task already had (Task.recoveries)
 */
export function decideRecovery(lostReason: string, recoveriesSoFar: number, policy: RecoveryPolicy): RecoveryDecision {
  const max = Math.max(0, Math.floor(policy.maxRecoveries));
  if (recoveriesSoFar < max) {
    const n = recoveriesSoFar + 1;
    const delayMs = recoveryDelayMs(n, policy);
    return { action: 'recover', delayMs, reason: `attempt lost (${lostReason}): recovery ${n} of ${max} in ${delayMs} ms` };
  }
  return {
    action: 'fail',
    status: 'FAILED_CONTROLLER',
    reason: `attempt lost (${lostReason}); recoveries spent (${recoveriesSoFar} of ${max}, JOBDECK_MAX_RECOVERIES)`,
  };
}

/** How an attempt ended according to its recorded exit status. */
export type ExitStatus = 'SUCCEEDED' | 'FAILED' | 'FAILED_SETUP';

/**
 * Classifies a recorded exit: code 0 → SUCCEEDED; non-zero in `setup` → FAILED_SETUP (run never
 * started); non-zero in `run` → FAILED.
 */
export function classifyExit(phase: 'setup' | 'run', exitCode: number): ExitStatus {
  if (exitCode === 0) return 'SUCCEEDED';
  return phase === 'setup' ? 'FAILED_SETUP' : 'FAILED';
}
