import { execFile, execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { logger } from '../log';
import { EXIT_FILE, HANDLE_FILE, WRAPPER, isServerOnlyEnv, readExitRecord, resolveWorkdir, toResult, validateEnvs, watchExitRecord } from './local';
import type { AttemptHandle, ExitListener, Executor, LaunchRequest, ProbeResult } from './types';

/**
 * The Slurm executor: runs each attempt as a Slurm batch job (`sbatch`), for work that needs more
 * than one machine. Same attempt semantics as the local executor (lib/executors/local.ts): the
 * same bash wrapper runs setup then run with the task's envs plus JOBDECK_JOB_ID /
 * JOBDECK_TASK_INDEX / JOBDECK_ATTEMPT, appends stdout and stderr in order to `req.logPath`, and
 * records `<attemptDir>/exit` (`{"phase","exitCode","endedAtMs"[,"reason"]}`, see ExitRecord);
 * setup failing ends the attempt with `phase: "setup"` (FAILED_SETUP).
 *
 * Requirements: the Slurm client commands (sbatch, scontrol, scancel, sinfo, sacct) on PATH, a
 * controller that answers, and `attemptDir` / `logPath` on a file system the compute nodes share
 * with jobdeck (always true on the one-node cluster of scripts/slurm-up.sh). Jobs run as the user
 * jobdeck runs as.
 *
 * Attempt folder (`req.attemptDir`, mode 0700, created by launch):
 *   batch.sh     the batch script given to sbatch (static text; the handle's reuse guard: Slurm
 *                shows it as `Command=`)
 *   wrapper.sh   the local executor's wrapper (WRAPPER), run by batch.sh with `bash -p`
 *   env          mode 0600: the task's envs and JOBDECK_JOB_ID/TASK_INDEX/ATTEMPT as NUL-separated
 *                `NAME=value` records, exported by batch.sh — values of any bytes (but NUL) reach
 *                the task verbatim; nothing is interpolated into a script, and the task's envs
 *                never reach sbatch itself (a task's SBATCH_* cannot change the submission)
 *   setup.sh, run.sh, handle.json, exit — as locally.
 *
 * sbatch: `--parsable --job-name=jobdeck-<job>-<task>-<attempt> --output=<logPath>
 * --open-mode=append --chdir=<attemptDir> --nodes=1 --ntasks=1 --cpus-per-task=ceil(cpus)
 * --no-requeue --export=ALL [--partition=P] batch.sh <attemptDir> <logPath> <workdir> <hasSetup>
 * <hasRun>`, started with the server's environment minus jobdeck's own settings (isServerOnlyEnv),
 * which Slurm passes to the job as its base environment (plus SLURM_*). `%` in the log path is
 * escaped (`%%`) so Slurm's filename patterns do not apply; a log path Slurm cannot represent (it
 * strips backslashes) gets `--output=/dev/null` and only the wrapper writes the log. The log's
 * folder is created first (Slurm does not create it; measured: FAILED, JobLaunchFailure 0:53).
 * `--no-requeue`: Slurm never reruns an attempt behind jobdeck's back after a node failure —
 * jobdeck's own recovery starts a new attempt instead (DESIGN.md §2).
 *
 * probe: the exit file first (the truth); else the controller: `scontrol ping` (4 ms; a down
 * controller otherwise costs 9–18 s per command), then `scontrol -o show job ID`:
 * - PENDING, CONFIGURING, RUNNING, COMPLETING, SUSPENDED, REQUEUED… → running;
 * - ended (COMPLETED, FAILED, CANCELLED, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE, TIMEOUT,
 *   OUT_OF_MEMORY…) → the exit file is read again (it may have landed in between); without it
 *   → lost, with Slurm's state and exit code in the reason (recovery, not the user's restart);
 * - unknown ("Invalid job id": purged after MinJobAge, or the controller's state was wiped), or
 *   the id now names another job (its Command is not this attempt's batch.sh) → lost, with what
 *   sacct still knows in the reason;
 * - controller down or not answering → throws {@link SlurmUnavailableError} (`transient: true`):
 *   a temporary condition the caller retries; it never means the attempt is lost.
 *
 * cancel: `scancel --signal=TERM --full` (batch script and every process of the job: the
 * wrapper traps TERM, records 143 and does not start run after a signal during setup), then after
 * `graceMs` `scancel --batch --signal=KILL` (SIGKILL to the batch step at once; a plain
 * `scancel --signal=KILL` is a job cancel in Slurm: TERM first, KILL only after KillWait) and
 * `scancel` (the job and any other steps); resolves when scontrol no longer shows the job active.
 * A pending job is simply `scancel`ed (it never ran: probe says lost). Which processes a signal
 * reaches is the cluster's ProctrackType: proctrack/cgroup or /pgid reach every process of the
 * attempt (scripts/slurm-up.sh uses pgid, like the local executor's process group);
 * proctrack/linuxproc loses processes whose parent died (measured: they outlive the job).
 *
 * Nothing essential is kept in memory: a fresh executor probes, watches and cancels from the
 * AttemptHandle (`ref` = the Slurm job id, `attemptDir`) alone. Models: SkyPilot's Slurm support
 * (`infra: slurm`) and Ray's job submission on Slurm run each job as one batch allocation.
 *
 * Limits: one node per task (SkyPilot `num_nodes: 1`); no memory request (LaunchRequest carries
 * none); a crash of jobdeck between sbatch's answer and the handle reaching the database leaves
 * handle.json behind (see readSlurmHandleFile), but a crash before handle.json is written leaves
 * a job jobdeck does not know (it finds it by name: `squeue -n jobdeck-<job>-<task>-<attempt>`).
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

/** Options of createSlurmExecutor. */
export interface SlurmExecutorOptions {
  /** Partition for sbatch and capacity; default `JOBDECK_SLURM_PARTITION`, else Slurm's default partition. */
  partition?: string;
  /** Interval of watch()'s fallback poll (ms, default 2000): sees `lost`, and exit files inotify misses (NFS). */
  pollMs?: number;
  /** How long capacity() reuses the CPU count (ms, default 10000). */
  capacityTtlMs?: number;
  /** Interval of the state checks while cancel() waits (ms, default 200). */
  cancelPollMs?: number;
}

/** Name of the batch script in the attempt folder (also the reuse guard: Slurm's `Command=`). */
export const BATCH_FILE = 'batch.sh';
/** Name of the env file in the attempt folder (NUL-separated `NAME=value` records, mode 0600). */
export const ENV_FILE = 'env';

// The batch script. Static text: inputs arrive as arguments (paths) and the env file; never
// interpolated. `bash -p` (privileged mode) so BASH_ENV, exported functions and SHELLOPTS of the
// base environment do not affect it. The env file's records are only collected here (never
// assigned in this shell, so a task's IFS, PATH, BASH or __jobdeck_* cannot change this script)
// and handed to the wrapper through env(1); the wrapper runs with `bash -p` as locally, so the
// task's envs reach setup and run but not the wrapper's own parsing. mv and sync are looked up
// on the node itself. (No dollar-brace in this text: it is a template literal.)
//   $1 attempt dir  $2 log file  $3 workdir  $4 has setup  $5 has run
const BATCH = String.raw`#!/bin/bash -p
# jobdeck Slurm batch script (generated; do not edit)
__jobdeck_dir=$1 __jobdeck_log=$2 __jobdeck_workdir=$3 __jobdeck_setup=$4 __jobdeck_run=$5
if [ ! -r "$__jobdeck_dir/env" ]; then
  echo "jobdeck: cannot read $__jobdeck_dir/env on $(hostname 2>/dev/null) (is the attempt folder on a shared file system?)" >&2
  exit 1
fi
set --
while IFS= read -r -d '' __jobdeck_kv; do set -- "$@" "$__jobdeck_kv"; done <"$__jobdeck_dir/env"
__jobdeck_mv=/bin/mv; [ -x "$__jobdeck_mv" ] || __jobdeck_mv=/usr/bin/mv
__jobdeck_sync=/bin/sync; [ -x "$__jobdeck_sync" ] || __jobdeck_sync=/usr/bin/sync; [ -x "$__jobdeck_sync" ] || __jobdeck_sync=
__jobdeck_env=/usr/bin/env; [ -x "$__jobdeck_env" ] || __jobdeck_env=/bin/env
exec "$__jobdeck_env" -- "$@" "$BASH" -p -- "$__jobdeck_dir/wrapper.sh" "$__jobdeck_dir" "$__jobdeck_log" "$__jobdeck_workdir" "$__jobdeck_mv" "$__jobdeck_sync" "$__jobdeck_setup" "$__jobdeck_run"
`;

/** Slurm job states in which the job (or its processes) may still run. squeue(1) "JOB STATE CODES". */
const ACTIVE_STATES = new Set([
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

/** The job name jobdeck gives an attempt: `jobdeck-<job>-<task>-<attempt>`. */
export function slurmJobName(req: Pick<LaunchRequest, 'jobId' | 'taskIndex' | 'attempt'>): string {
  return `jobdeck-${req.jobId}-${req.taskIndex}-${req.attempt}`;
}

/**
 * The `--output` value for a log path: `%` doubled (Slurm's filename patterns); null when Slurm
 * cannot represent the path (a backslash turns pattern processing off and is itself stripped).
 */
export function slurmOutputPattern(logPath: string): string | null {
  if (logPath.includes('\\') || logPath.includes('\n')) return null;
  return logPath.replaceAll('%', '%%');
}

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

/**
 * Reads the handle copy launch() leaves in the attempt folder (for recovery when jobdeck died
 * between sbatch's answer and the database write).
 * @returns null when absent, unreadable or not a Slurm handle.
 */
export function readSlurmHandleFile(attemptDir: string): AttemptHandle | null {
  try {
    const h = JSON.parse(readFileSync(path.join(attemptDir, HANDLE_FILE), 'utf8')) as AttemptHandle;
    return h && h.executor === 'slurm' && typeof h.ref === 'string' && /^\d+$/.test(h.ref) ? h : null;
  } catch {
    return null;
  }
}

interface CmdResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a Slurm client command; never throws for a non-zero exit (see `code`). */
function run(cmd: string, args: string[], opts: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string }): Promise<CmdResult> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { encoding: 'utf8', timeout: opts.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 * 1024 * 1024, env: opts.env, cwd: opts.cwd }, (err, stdout, stderr) => {
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
function jobIdOf(handle: AttemptHandle): string | null {
  return /^\d+$/.test(handle.ref ?? '') ? handle.ref : null;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const firstLine = (s: string) => s.trim().split('\n')[0] ?? '';

/** What the controller says about a handle's job. */
type JobView =
  | { kind: 'known'; info: SlurmJobInfo }
  /** No such job (purged, never existed, or the controller's state was wiped). */
  | { kind: 'unknown' }
  /** The id names another job now (its batch script is not this attempt's). */
  | { kind: 'reused'; info: SlurmJobInfo };

/**
 * Creates a Slurm executor (see the module doc). Use getExecutor('slurm') (lib/executors/index.ts)
 * for the process-wide one; create others only in tests.
 */
export function createSlurmExecutor(opts: SlurmExecutorOptions = {}): Executor {
  const partition = opts.partition ?? (process.env.JOBDECK_SLURM_PARTITION || undefined);
  const pollMs = opts.pollMs ?? 2000;
  const capacityTtlMs = opts.capacityTtlMs ?? 10_000;
  const cancelPollMs = opts.cancelPollMs ?? 200;
  let cap: { cpus: number; atMs: number } | null = null;
  let capRefreshing = false;

  /** @throws SlurmUnavailableError when `scontrol ping` does not report the controller UP. */
  async function ensureController(): Promise<void> {
    const r = await run('scontrol', ['ping'], { timeoutMs: 10_000 });
    if (r.code !== 0 || !/\bUP\b/.test(r.stdout)) {
      throw new SlurmUnavailableError(`Slurm controller is not answering (scontrol ping: ${firstLine(r.stdout + r.stderr) || `exit code ${r.code}`})`);
    }
  }

  function batchPathsOf(attemptDir: string): string[] {
    const p = path.join(path.resolve(attemptDir), BATCH_FILE);
    const out = [p];
    try {
      const real = realpathSync(p);
      if (real !== p) out.push(real);
    } catch {
      /* gone: the literal path is all we can compare */
    }
    return out;
  }

  /** @throws SlurmUnavailableError (controller down, timeouts, unexpected scontrol errors). */
  async function viewJob(id: string, attemptDir: string): Promise<JobView> {
    await ensureController();
    const r = await run('scontrol', ['-o', 'show', 'job', id], { timeoutMs: 30_000 });
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

  /** What sacct still knows about a job (accounting or jobcomp/filetxt), for a lost reason. */
  async function sacctSays(id: string): Promise<string | null> {
    for (const extra of [['-c'], ['-X']]) {
      try {
        const r = await run('sacct', [...extra, '-n', '-P', '-j', id, '-o', 'JobID,State,ExitCode'], { timeoutMs: 10_000 });
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

  function describeEnd(info: SlurmJobInfo): string {
    const code = info.exitCode !== null ? ` exit code ${info.exitCode}:${info.signal}` : '';
    const reason = info.reason && info.reason !== 'None' ? `, reason ${info.reason}` : '';
    return `${info.state}${code}${reason}`;
  }

  async function launch(req: LaunchRequest): Promise<AttemptHandle> {
    validateEnvs(req.envs);
    const attemptDir = path.resolve(req.attemptDir);
    const logPath = path.resolve(req.logPath);
    const workdir = resolveWorkdir(req.workdir, attemptDir);
    if (!(req.cpus > 0) || !Number.isFinite(req.cpus)) throw new TypeError(`cpus must be a number > 0, got ${req.cpus}`);
    await ensureController();

    mkdirSync(attemptDir, { recursive: true, mode: 0o700 }); // scripts and env may hold secrets
    for (const f of [EXIT_FILE, 'exit.tmp', HANDLE_FILE, 'setup.sh', 'run.sh', ENV_FILE]) rmSync(path.join(attemptDir, f), { force: true });
    mkdirSync(path.dirname(logPath), { recursive: true });
    closeSync(openSync(logPath, 'a')); // surfaces a bad log path as a launch error
    writeFileSync(path.join(attemptDir, 'wrapper.sh'), WRAPPER);
    const batchPath = path.join(attemptDir, BATCH_FILE);
    writeFileSync(batchPath, BATCH, { mode: 0o700 });
    if (req.setup !== null) writeFileSync(path.join(attemptDir, 'setup.sh'), req.setup);
    if (req.run !== null) writeFileSync(path.join(attemptDir, 'run.sh'), req.run);
    const envs: Record<string, string> = {
      ...req.envs,
      JOBDECK_JOB_ID: String(req.jobId),
      JOBDECK_TASK_INDEX: String(req.taskIndex),
      JOBDECK_ATTEMPT: String(req.attempt),
    };
    writeFileSync(
      path.join(attemptDir, ENV_FILE),
      Object.entries(envs)
        .map(([k, v]) => `${k}=${v}\0`)
        .join(''),
      { mode: 0o600 },
    );

    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !isServerOnlyEnv(k)) env[k] = v;
    const output = slurmOutputPattern(logPath) ?? '/dev/null';
    const args = [
      '--parsable',
      `--job-name=${slurmJobName(req)}`,
      `--output=${output}`,
      '--open-mode=append',
      `--chdir=${attemptDir}`,
      '--nodes=1',
      '--ntasks=1',
      `--cpus-per-task=${Math.ceil(req.cpus)}`,
      '--no-requeue',
      '--export=ALL',
      ...(partition ? [`--partition=${partition}`] : []),
      batchPath,
      attemptDir,
      logPath,
      workdir,
      req.setup !== null ? '1' : '0',
      req.run !== null ? '1' : '0',
    ];
    const r = await run('sbatch', args, { timeoutMs: 60_000, env: env as NodeJS.ProcessEnv, cwd: attemptDir });
    const id = /^(\d+)(?:;\S*)?$/.exec(r.stdout.trim())?.[1];
    if (r.code !== 0 || !id) {
      const msg = firstLine(r.stderr) || firstLine(r.stdout) || `exit code ${r.code}`;
      throw new Error(`Slurm executor: sbatch refused the attempt: ${msg}`);
    }
    const handle: AttemptHandle = { executor: 'slurm', ref: id, pid: null, pidStartTime: null, attemptDir };
    const tmp = path.join(attemptDir, `${HANDLE_FILE}.tmp`);
    writeFileSync(tmp, JSON.stringify(handle) + '\n');
    renameSync(tmp, path.join(attemptDir, HANDLE_FILE));
    return handle;
  }

  async function probe(handle: AttemptHandle): Promise<ProbeResult> {
    const dir = handle.attemptDir;
    const first = readExitRecord(dir);
    if (first) return toResult(first);
    const id = jobIdOf(handle);
    if (id === null) return { state: 'lost', reason: `the handle ${JSON.stringify(handle.ref)} names no Slurm job` };
    const view = await viewJob(id, dir);
    if (view.kind === 'known' && ACTIVE_STATES.has(view.info.state)) return { state: 'running' };
    // Ended or gone: the exit file may have been renamed into place in between.
    const second = readExitRecord(dir);
    if (second) return toResult(second);
    if (view.kind === 'known') return { state: 'lost', reason: `Slurm job ${id} ended ${describeEnd(view.info)} and recorded no exit status` };
    if (view.kind === 'reused') {
      return { state: 'lost', reason: `Slurm job id ${id} now names another job (${view.info.command ?? 'no command'}); this attempt recorded no exit status` };
    }
    const acct = await sacctSays(id);
    return { state: 'lost', reason: `Slurm job ${id} is unknown to the controller${acct ? ` (${acct})` : ''} and recorded no exit status` };
  }

  function watch(handle: AttemptHandle, listener: ExitListener): () => void {
    // The scheduler, not jobdeck, is the parent: the folder watch and the poll (which also sees
    // `lost`, and exit files written on another node that inotify does not report).
    return watchExitRecord(handle, listener, { name: 'slurm executor', probe, pollMs });
  }

  async function cancel(handle: AttemptHandle, cancelOpts: { graceMs?: number } = {}): Promise<void> {
    const graceMs = cancelOpts.graceMs ?? 10_000;
    const id = jobIdOf(handle);
    if (id === null) return;
    const activeState = async (): Promise<string | null> => {
      const v = await viewJob(id, handle.attemptDir);
      return v.kind === 'known' && ACTIVE_STATES.has(v.info.state) ? v.info.state : null;
    };
    const waitInactive = async (untilMs: number): Promise<boolean> => {
      for (;;) {
        if ((await activeState()) === null) return true;
        const left = untilMs - Date.now();
        if (left <= 0) return false;
        await sleep(Math.min(cancelPollMs, left));
      }
    };
    // scancel errors ("already completing or completed") are not failures: the state decides.
    const scancel = (args: string[]) => run('scancel', [...args, id], { timeoutMs: 30_000 });

    const state = await activeState();
    if (state === null) return;
    if (state === 'PENDING' || state === 'REQUEUE_HOLD' || state === 'RESV_DEL_HOLD' || state === 'REQUEUED') {
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

  /** Total CPUs of the partition (`sinfo -h -o '%P %C'`: A/I/O/T, T taken). @throws when unknown. */
  function parseCapacity(out: string): number {
    const lines = out.split('\n').map((l) => l.trim()).filter(Boolean);
    const pick = partition
      ? lines.find((l) => l.split(/\s+/)[0].replace(/\*$/, '') === partition)
      : (lines.find((l) => l.split(/\s+/)[0].endsWith('*')) ?? (lines.length === 1 ? lines[0] : undefined));
    const m = pick ? /\s(\d+)\/(\d+)\/(\d+)\/(\d+)$/.exec(pick) : null;
    if (!m) throw new Error(`Slurm executor: no CPU count for partition ${partition ?? '(default)'} in sinfo output ${JSON.stringify(out.slice(0, 200))}`);
    return Number(m[4]);
  }
  const SINFO_ARGS = ['-h', '-o', '%P %C'];

  function refreshCapacity(): void {
    if (capRefreshing) return;
    capRefreshing = true;
    run('sinfo', SINFO_ARGS, { timeoutMs: 30_000 })
      .then((r) => {
        if (r.code === 0) cap = { cpus: parseCapacity(r.stdout), atMs: Date.now() };
      })
      .catch((err) => logger().warn({ err }, 'slurm executor: sinfo failed; keeping the last CPU count'))
      .finally(() => (capRefreshing = false));
  }

  /**
   * CPUs of the partition (total, including busy and down nodes: Slurm queues what does not fit).
   * Cached `capacityTtlMs`, refreshed in the background; the very first call asks synchronously
   * (`scontrol ping` then `sinfo`, a few ms).
   * @throws Error when the first count cannot be had (controller down): the caller's jobs wait.
   */
  function capacity(): { cpus: number } {
    if (cap) {
      if (Date.now() - cap.atMs > capacityTtlMs) refreshCapacity();
      return { cpus: cap.cpus };
    }
    try {
      execFileSync('scontrol', ['ping'], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'pipe'] });
      const out = execFileSync('sinfo', SINFO_ARGS, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] });
      cap = { cpus: parseCapacity(out), atMs: Date.now() };
      return { cpus: cap.cpus };
    } catch (err) {
      throw new SlurmUnavailableError(`Slurm executor: cannot read the cluster's CPUs: ${(err as Error).message.split('\n')[0]}`, { cause: err });
    }
  }

  return { name: 'slurm', launch, probe, watch, cancel, capacity, findHandle: readSlurmHandleFile };
}
