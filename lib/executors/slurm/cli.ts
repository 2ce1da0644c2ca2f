import { execFile } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { LimitKind } from '../../jobs/limits';
import type { OsAccount } from '../../accounts';
import { recordDirOf } from '../attempt-record';
import { accountTools } from '../hand-over';
import type { AttemptHandle } from '../types';

/**
 * Talking to the Slurm controller through its client commands (scontrol, sacct) and reading
 * their output: what a job's state is, whether an id still names this attempt's job, and the
 * one error that means "temporarily unreachable" (SlurmUnavailableError, `transient: true`) as
 * opposed to "the attempt is lost". The executor's verbs build on these
 * (docs/slurm.md, "Probe: what jobdeck believes").
 */

/** The controller is down or not answering: temporary; retry later, never treat as lost. */
export class SlurmUnavailableError extends Error {
  /** Marks the error as temporary for the monitor (retry with backoff, no status change). */
  readonly transient = true;
  readonly code = 'ESLURMUNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SlurmUnavailableError';
  }
}

/** The batch script's name in the attempt folder (also the reuse guard: Slurm's `Command=`). */
export const BATCH_FILE = 'batch.sh';
/**
 * Name of the mark in an attempt folder whose attempt joined a job group's heterogeneous job
 * (lib/executors/slurm/group.ts): the group folder's path, whose batch script is then the one
 * Slurm's `Command=` shows.
 */
export const GROUP_MARK = 'group';

/** Slurm job states in which the job (or its processes) may still run. squeue(1) "JOB STATE CODES". */
export const ACTIVE_STATES = new Set([
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'STOPPED',
  'SIGNALING',
  'STAGE_OUT',
  'RESIZING',
  'REQUEUED',
  'REQUEUE_FED',
  'REQUEUE_HOLD',
  'RESV_DEL_HOLD',
]);

/** What `scontrol -o show job ID` says about a job. */
export interface SlurmJobInfo {
  jobId: string;
  /** JobState, e.g. RUNNING, COMPLETED, FAILED, CANCELLED, NODE_FAIL. */
  state: string;
  /** Reason field (e.g. None, NonZeroExitCode, JobLaunchFailure). */
  reason: string | null;
  /** ExitCode "a:b": a = exit code of the batch script, b = signal that ended it. */
  exitCode: number | null;
  signal: number | null;
  /** Command= (the batch script's path, then its arguments joined by spaces), null when the line has none. */
  command: string | null;
}

/**
 * Parses one line of `scontrol -o show job` (fields `Key=value` separated by spaces; values
 * such as Command and WorkDir may contain spaces, so Command is read up to ` WorkDir=`).
 * @returns null when the line is not a job record.
 */
export function parseScontrolJob(line: string): SlurmJobInfo | null {
  const id = /(?:^|\s)JobId=(\d+)/.exec(line);
  const state = /\sJobState=(\S+)/.exec(line);
  if (!id || !state) return null;
  const reason = /\sReason=(\S+)/.exec(line);
  const ec = /\sExitCode=(\d+):(\d+)/.exec(line);
  const cmd = /\sCommand=(.*?)\sWorkDir=/.exec(line);
  return {
    jobId: id[1],
    state: state[1],
    reason: reason ? reason[1] : null,
    exitCode: ec ? Number(ec[1]) : null,
    signal: ec ? Number(ec[2]) : null,
    command: cmd ? cmd[1] : null,
  };
}

/** What a Slurm client command answered. */
export interface CmdResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a Slurm client command; never throws for a non-zero exit (see `code`).
 * @throws SlurmUnavailableError when the command is missing or does not answer within timeoutMs.
 */
export function runSlurm(cmd: string, args: string[], opts: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string; as?: OsAccount }): Promise<CmdResult> {
  const setpriv = opts.as ? accountTools()?.setpriv : undefined;
  if (opts.as && !setpriv) return Promise.reject(new Error(`Slurm executor: setpriv (util-linux) is missing, so ${cmd} cannot run as ${opts.as.name}`));
  // As the account (sbatch: the job is then the account's): its uid, gid and groups, then exec.
  const [file, argv] = opts.as && setpriv ? [setpriv, [`--reuid=${opts.as.uid}`, `--regid=${opts.as.gid}`, '--init-groups', '--', cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { encoding: 'utf8', timeout: opts.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 * 1024 * 1024, env: opts.env, cwd: opts.cwd }, (err, stdout, stderr) => {
      if (!err) return resolve({ code: 0, stdout, stderr });
      const e = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean };
      if (e.code === 'ENOENT') return reject(new SlurmUnavailableError(`Slurm executor: ${cmd} not found on PATH (install the Slurm client, e.g. scripts/slurm-up.sh)`, { cause: err }));
      if (e.killed) return reject(new SlurmUnavailableError(`Slurm executor: ${cmd} ${args.join(' ')} did not answer within ${opts.timeoutMs} ms`, { cause: err }));
      if (typeof e.code === 'number') return resolve({ code: e.code, stdout, stderr });
      reject(err);
    });
  });
}

/** The Slurm job id of a handle, or null when `ref` is not one. */
export function jobIdOf(handle: AttemptHandle): string | null {
  return /^\d+$/.test(handle.ref ?? '') ? handle.ref : null;
}

/** The first line of a command's output (for error messages). */
export const firstLine = (s: string) => s.trim().split('\n')[0] ?? '';

/** What the controller says about a handle's job. */
export type JobView =
  | { kind: 'known'; info: SlurmJobInfo }
  /** No such job (purged, never existed, or the controller's state was wiped). */
  | { kind: 'unknown' }
  /** The id names another job now (its batch script is not this attempt's). */
  | { kind: 'reused'; info: SlurmJobInfo };

/** @throws SlurmUnavailableError when `scontrol ping` does not report the controller UP. */
export async function ensureController(): Promise<void> {
  const r = await runSlurm('scontrol', ['ping'], { timeoutMs: 10_000 });
  if (r.code !== 0 || !/\bUP\b/.test(r.stdout)) {
    throw new SlurmUnavailableError(`Slurm controller is not answering (scontrol ping: ${firstLine(r.stdout + r.stderr) || `exit code ${r.code}`})`);
  }
}

/** The group folder of an attempt that joined a job group's job (its GROUP_MARK), or null. */
export function groupMarkOf(attemptDir: string): string | null {
  try {
    const g = readFileSync(path.join(attemptDir, GROUP_MARK), 'utf8').trim();
    return path.isAbsolute(g) ? g : null;
  } catch {
    return null;
  }
}

/**
 * The batch script of `attemptDir` as Command= may show it: the path as written, and resolved;
 * for an attempt that joined a job group's job, the group's batch script.
 */
function batchPathsOf(attemptDir: string): string[] {
  const group = groupMarkOf(path.resolve(attemptDir));
  const p = path.join(group ?? recordDirOf(path.resolve(attemptDir)), BATCH_FILE);
  const out = [p];
  try {
    const real = realpathSync(p);
    if (real !== p) out.push(real);
  } catch {
    /* gone: the literal path is all we can compare */
  }
  return out;
}

/**
 * What `scontrol -o show job ID` says about job `id`, checked against `attemptDir`'s batch script.
 * @throws SlurmUnavailableError (controller down, timeouts, unexpected scontrol errors).
 */
export async function viewJob(id: string, attemptDir: string): Promise<JobView> {
  await ensureController();
  const r = await runSlurm('scontrol', ['-o', 'show', 'job', id], { timeoutMs: 30_000 });
  if (r.code !== 0) {
    if (/invalid job id/i.test(r.stderr + r.stdout)) return { kind: 'unknown' };
    throw new SlurmUnavailableError(`scontrol show job ${id} failed (exit code ${r.code}): ${firstLine(r.stderr + r.stdout)}`);
  }
  const line = r.stdout.split('\n').find((l) => new RegExp(`(?:^|\\s)JobId=${id}\\s`).test(l));
  const info = line ? parseScontrolJob(line) : null;
  if (!info) {
    // rc 0 and no record of this id: treat like "unknown" only if the output is empty.
    if (r.stdout.trim() === '') return { kind: 'unknown' };
    throw new SlurmUnavailableError(`scontrol show job ${id}: unexpected output ${JSON.stringify(firstLine(r.stdout).slice(0, 200))}`);
  }
  // Command= is the batch script's path followed by its arguments (which start with attemptDir).
  const ours = (c: string) => batchPathsOf(attemptDir).some((p) => c === p || c.startsWith(`${p} `));
  if (info.command !== null && !ours(info.command)) return { kind: 'reused', info };
  return { kind: 'known', info };
}

/** Most job ids one `squeue -j` is given (keeps its argument well under the system's limit). */
export const SQUEUE_IDS_MAX = 1000;

/**
 * The jobs among `ids` that Slurm holds PENDING, each with its reason (`squeue -h -o '%A %T %r'
 * -j ids`: one call per SQUEUE_IDS_MAX ids): "Resources", "Priority", "Dependency"… A job that
 * runs, ended or is unknown (purged) is not in the answer; so is every id when none is known
 * (squeue then fails with "Invalid job id").
 * @throws SlurmUnavailableError when squeue does not answer or fails otherwise.
 */
export async function pendingReasons(ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  // A controller that is down makes squeue take 9–18 s to fail; ping answers in ms.
  await ensureController();
  for (let i = 0; i < ids.length; i += SQUEUE_IDS_MAX) {
    const chunk = ids.slice(i, i + SQUEUE_IDS_MAX);
    // %A: each job's own id — a heterogeneous job's component too (%i shows it as `leader+K`).
    const r = await runSlurm('squeue', ['-h', '-o', '%A %T %r', '-j', chunk.join(',')], { timeoutMs: 30_000 });
    if (r.code !== 0) {
      if (/invalid job id/i.test(r.stderr + r.stdout)) continue;
      throw new SlurmUnavailableError(`squeue -j failed (exit code ${r.code}): ${firstLine(r.stderr + r.stdout)}`);
    }
    for (const line of r.stdout.split('\n')) {
      const m = /^(\d+)\s+(\S+)\s*(.*)$/.exec(line.trim());
      // Printable, bounded: the reason is shown as is (a list column, a job page).
      if (m && m[2] === 'PENDING') out.set(m[1], m[3].replace(/[^\x20-\x7e]/g, '?').slice(0, 120) || 'None');
    }
  }
  return out;
}

/** What sacct still knows about a job (accounting or jobcomp/filetxt), for a lost reason. */
export async function sacctSays(id: string): Promise<string | null> {
  for (const extra of [['-c'], ['-X']]) {
    try {
      const r = await runSlurm('sacct', [...extra, '-n', '-P', '-j', id, '-o', 'JobID,State,ExitCode'], { timeoutMs: 10_000 });
      if (r.code !== 0) continue;
      const row = r.stdout
        .split('\n')
        .map((l) => l.split('|'))
        .find((f) => f[0] === id);
      if (row) return `sacct: ${row[1]} ${row[2]}`;
    } catch {
      /* sacct missing or slow: the reason just says less */
    }
  }
  return null;
}

/**
 * The limit a Slurm end state is (docs/slurm.md "Limits"): TIMEOUT — the job's --time
 * (max_duration) — or OUT_OF_MEMORY — its --mem — ; null for any other state. These end the
 * task FAILED with the limit's reason, never a recovery.
 */
export function limitOfState(state: string): LimitKind | null {
  if (state === 'TIMEOUT' || state === 'DEADLINE') return 'time';
  if (state === 'OUT_OF_MEMORY') return 'memory';
  return null;
}

/**
 * The limit that ends (or is ending) a job: its state (limitOfState), or — while it is still
 * COMPLETING, which is when the wrapper records the SIGTERM of the time limit — its reason
 * (`TimeLimit`, `OutOfMemory`).
 */
export function limitOfJob(info: Pick<SlurmJobInfo, 'state' | 'reason'>): LimitKind | null {
  const byState = limitOfState(info.state);
  if (byState) return byState;
  if (info.reason === 'TimeLimit') return 'time';
  if (info.reason === 'OutOfMemory') return 'memory';
  return null;
}

/** A job's exit code as the wrapper would record it: 128 + the signal that ended it, else its code (0 unknown). */
export function slurmExitCode(info: SlurmJobInfo): number {
  if (info.signal) return 128 + info.signal;
  return info.exitCode ?? 0;
}

/** A Slurm end for a lost reason: state, exit code and reason (`FAILED exit code 1:0, reason NonZeroExitCode`). */
export function describeEnd(info: SlurmJobInfo): string {
  const code = info.exitCode !== null ? ` exit code ${info.exitCode}:${info.signal}` : '';
  const reason = info.reason && info.reason !== 'None' ? `, reason ${info.reason}` : '';
  return `${info.state}${code}${reason}`;
}

/**
 * The steps of job `id` that run tasks (`<id>.<n>`; not the batch or extern step), from
 * `squeue -s`. Empty when there are none or squeue fails (the caller's state checks decide).
 * @throws SlurmUnavailableError when squeue does not answer.
 */
export async function jobSteps(id: string): Promise<string[]> {
  const r = await runSlurm('squeue', ['-h', '-s', '-j', id, '-o', '%i'], { timeoutMs: 30_000 });
  if (r.code !== 0) return [];
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => new RegExp(`^${id}\\.\\d+$`).test(l));
}
