import path from 'node:path';
import { loadConfig } from '../config';

/**
 * Where a job's files live under the data folder (`$JOBDECK_HOME`, lib/config.ts):
 *
 *   $JOBDECK_HOME/jobs/<jobId>/                          the job's folder (removed by deleteJobs)
 *   $JOBDECK_HOME/jobs/<jobId>/task-<index>/attempt-<n>/ one attempt's folder (executor files)
 *   $JOBDECK_HOME/jobs/<jobId>/task-<index>/attempt-<n>/run.log   the attempt's log (Attempt.logPath)
 *   $JOBDECK_HOME/jobs/<jobId>/task-<index>/attempt-<n>/work/     the attempt's workspace: its
 *                                                        default workdir and the copy of an
 *                                                        uploaded folder (workspaceOf)
 *
 *   $JOBDECK_HOME/jobs/<jobId>/task-<index>/attempt-<n>/run.rank-<k>.log  rank k's log (k ≥ 1) of
 *                                                        a multi-node attempt (rank 0: run.log)
 *
 * `index` is the 0-based task index, `n` the 1-based attempt number. The monitor stores the
 * absolute log path on the Attempt row when it creates it; readers use Attempt.logPath, never
 * this layout, so the layout may change without breaking old attempts.
 */

/** The data folder: `home` when given, else `$JOBDECK_HOME` (default ~/.jobdeck). */
export function dataFolder(home?: string): string {
  return root(home);
}

function root(home?: string): string {
  return path.resolve(home ?? loadConfig().home);
}

/** `$JOBDECK_HOME/jobs`: the parent of every job folder. */
export function jobsRoot(home?: string): string {
  return path.join(root(home), 'jobs');
}

/** `$JOBDECK_HOME/jobs/<jobId>`. @throws RangeError for an id that is not a positive integer. */
export function jobDir(jobId: number, home?: string): string {
  if (!Number.isInteger(jobId) || jobId <= 0) throw new RangeError(`job id must be a positive integer, got ${jobId}`);
  return path.join(jobsRoot(home), String(jobId));
}

/** `$JOBDECK_HOME/jobs/<jobId>/task-<taskIndex>/attempt-<attempt>`. */
export function attemptDir(jobId: number, taskIndex: number, attempt: number, home?: string): string {
  if (!Number.isInteger(taskIndex) || taskIndex < 0) throw new RangeError(`task index must be an integer ≥ 0, got ${taskIndex}`);
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt number must be an integer ≥ 1, got ${attempt}`);
  return path.join(jobDir(jobId, home), `task-${taskIndex}`, `attempt-${attempt}`);
}

/** The attempt's log file: `<attemptDir>/run.log` (stored as Attempt.logPath). */
export function attemptLogPath(jobId: number, taskIndex: number, attempt: number, home?: string): string {
  return path.join(attemptDir(jobId, taskIndex, attempt, home), 'run.log');
}

/**
 * The log of rank `rank` of a multi-node attempt whose (rank 0) log is `logPath`: `logPath` itself
 * for rank 0, else `<name>.rank-<rank><ext>` beside it (`run.log` → `run.rank-2.log`). Derived from
 * the stored Attempt.logPath, so every reader and writer finds the same file.
 * @throws RangeError for a rank that is not an integer ≥ 0.
 */
export function rankLogPath(logPath: string, rank: number): string {
  if (!Number.isInteger(rank) || rank < 0) throw new RangeError(`rank must be an integer ≥ 0, got ${rank}`);
  if (rank === 0) return logPath;
  const ext = path.extname(logPath);
  const base = ext ? logPath.slice(0, -ext.length) : logPath;
  return `${base}.rank-${rank}${ext}`;
}

/**
 * The time index beside a log (docs/design.md §8 "Line times"): `run.log` → `run.times`,
 * `run.rank-2.log` → `run.rank-2.times`. Derived from the log's path, like rankLogPath.
 */
export function timesPath(logPath: string): string {
  const ext = path.extname(logPath);
  return `${ext ? logPath.slice(0, -ext.length) : logPath}.times`;
}

/**
 * The attempt's workspace: `<attemptDir>/work`, a fresh folder of the attempt's own — the default
 * workdir and where an uploaded folder is copied (docs/spec.md "workdir"). The one part of the
 * attempt folder the job's OS account owns; the rest (scripts, log, exit record, handle) is
 * jobdeck's (docs/design.md §16).
 */
export function workspaceOf(attemptDir: string): string {
  return path.join(attemptDir, 'work');
}
