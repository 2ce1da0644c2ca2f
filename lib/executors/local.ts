import { spawn } from 'node:child_process';
import {
  existsSync,
  readFileSync,
  renameSync,
  statSync,
  watch as fsWatch,
  writeFileSync,
  type FSWatcher,
} from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { logger } from '../log';
import { readProcStat, sendSignal, isLiveState, sharedProcScanner, type ProcScanner } from './proc';
import { LauncherGoneError, sharedLauncher, type Launcher } from './launcher';
import type { AttemptHandle, ExitListener, Executor, LaunchRequest, ProbeResult } from './types';

/**
 * The local executor: runs each attempt as a detached bash wrapper on this machine.
 *
 * Attempt folder layout (`req.attemptDir`, created by launch):
 *   wrapper.sh   the wrapper (same text for every attempt; all inputs come as arguments/env)
 *   setup.sh     the task's setup script, verbatim (absent when setup is null)
 *   run.sh       the task's run script, verbatim (absent when run is null)
 *   handle.json  the AttemptHandle, written right after the spawn (see readHandleFile)
 *   exit.tmp     transient: the exit record being written
 *   exit         the exit record, one JSON line, renamed into place atomically (see ExitRecord)
 * The log file is `req.logPath` (anywhere; its folder is created): setup then run, stdout and
 * stderr through one file descriptor opened for append, so lines keep their write order.
 *
 * Process model: the wrapper is spawned with setsid() (detached), stdio on /dev/null — by the
 * attempt launcher, a small child process of the server (lib/executors/launcher.ts; the server
 * never forks itself), or by this process when the launcher is off (`JOBDECK_LAUNCHER=0`). Its
 * parent (launcher or server) reaps it and reports the exit at once; when that parent is gone,
 * the exit record is watched instead. Its pid is the attempt's process group AND session id. setup and run run as `bash <file>` in
 * `workdir`, in that group. The environment is the server's own minus jobdeck's configuration
 * (isServerOnlyEnv), plus the task's envs, plus JOBDECK_JOB_ID / JOBDECK_TASK_INDEX /
 * JOBDECK_ATTEMPT (these win). The wrapper traps SIGTERM/SIGINT/SIGHUP: it waits for the running
 * phase, records its code (143 for a child that died of SIGTERM) and does not start run after a
 * signal during setup. An attempt that had to be SIGKILLed records nothing (probe: lost) — the
 * caller knows it asked for the cancel.
 *
 * Limits: a process that calls setsid() itself leaves the attempt's session and escapes cancel
 * (as with Ray and SkyPilot, which also kill by process group). When the wrapper alone dies
 * (OOM killer, kill -9 of its pid) the attempt is `lost` while its children may still run: call
 * cancel(handle) on a lost attempt to stop them before starting a recovery. The monitor calls
 * cancel() after every attempt's end for that reason (leftovers such as `sleep 300 &`): on a
 * finished attempt it costs one /proc scan (shared with concurrent cancels, yielding to the event
 * loop) and sends no signal when nothing is left.
 *
 * Nothing essential is kept in memory: a fresh executor (after a jobdeck restart) can probe,
 * watch and cancel an attempt from its AttemptHandle alone (even from `ref` alone). Model: Ray's
 * job supervisor and SkyPilot's job driver also run the job in its own process group and kill
 * that group on stop.
 */

/** Name of the exit record in the attempt folder. */
export const EXIT_FILE = 'exit';
/** Name of the handle copy in the attempt folder. */
export const HANDLE_FILE = 'handle.json';

/**
 * What the wrapper records when the attempt ends, as one JSON line in `<attemptDir>/exit`
 * (written to `exit.tmp`, renamed, then fsynced with its folder before the wrapper exits):
 * `{"phase":"setup"|"run","exitCode":N,"endedAtMs":<epoch ms, wrapper's clock>[,"reason":"…"]}`.
 * `phase: "setup"` with a non-zero code means setup failed (or never started: missing workdir,
 * cancelled between setup and run) and run never started; `phase: "run"` carries run's code
 * (0 when run is null). A process killed by signal N exits 128+N (SIGTERM → 143).
 */
export interface ExitRecord {
  phase: 'setup' | 'run';
  exitCode: number;
  endedAtMs: number;
  /** Set by the wrapper when it ended the attempt itself (missing workdir, cancel, log file). */
  reason?: string;
}

/** Options of createLocalExecutor. */
export interface LocalExecutorOptions {
  /** CPU budget; default `JOBDECK_CPUS` or `os.availableParallelism()`. */
  cpus?: number;
  /** Interval of the fallback poll of watch() for attempts this process is not the parent of (ms, default 1000). */
  pollMs?: number;
  /**
   * Test seams to force interleavings (never set in production). `afterFirstExitRead` runs in
   * probe() between the first read of the exit file (found nothing) and the process-table check.
   */
  hooks?: { afterFirstExitRead?: (handle: AttemptHandle) => void | Promise<void> };
  /**
   * The process-table scanner cancel() uses (default: the process-wide sharedProcScanner()):
   * concurrent cancels share its `/proc` scans. Tests inject a counting one.
   */
  procScanner?: ProcScanner;
  /**
   * Who spawns the wrappers (default: the process-wide sharedLauncher(), lib/executors/launcher.ts);
   * null: this process spawns them itself (also what `JOBDECK_LAUNCHER=0` selects).
   */
  launcher?: Launcher | null;
}

/**
 * Variables of the server's own environment NOT passed to attempts: jobdeck's configuration and
 * secrets (JOBDECK_TOKEN, DATABASE_URL…). Everything else (PATH, HOME, LANG…) is inherited, then
 * the task's envs, then JOBDECK_JOB_ID / JOBDECK_TASK_INDEX / JOBDECK_ATTEMPT.
 */
export function isServerOnlyEnv(name: string): boolean {
  return name.startsWith('JOBDECK_') || name === 'DATABASE_URL';
}

// The wrapper. Static text: the attempt's inputs arrive as positional arguments (paths) and as the
// environment (the task's envs), never by interpolation into the script.
//   $1 attempt dir  $2 log file  $3 workdir  $4 mv  $5 sync ('' = none)  $6 has setup  $7 has run
// It is started as `bash -p` so that BASH_ENV, exported functions, SHELLOPTS/BASHOPTS, CDPATH and
// GLOBIGNORE from the task's envs do not affect the wrapper itself; `set +p` then restores the
// normal behaviour for setup and run, which get those variables as usual (only a task's own
// SHELLOPTS/BASHOPTS are not passed on). External commands are called by absolute path because
// the task's envs may change PATH. Names starting with __jobdeck_ are reserved. (No dollar-brace
// in this text: it is a template literal.)
/** The attempt wrapper (bash; arguments above). Exported for the Slurm executor, which runs the same text. */
export const WRAPPER = String.raw`# jobdeck attempt wrapper (generated; do not edit)
set +p
__jobdeck_dir=$1 __jobdeck_log=$2 __jobdeck_workdir=$3 __jobdeck_mv=$4 __jobdeck_sync=$5
__jobdeck_term=0
trap '__jobdeck_term=1' TERM INT HUP
__jobdeck_finish() { # phase exit-code [reason]
  local s us ms
  # EPOCHREALTIME (bash 5): seconds, the locale's decimal point, microseconds.
  IFS=., read -r s us <<<"$EPOCHREALTIME"
  if [ -n "$us" ]; then ms=$(( s * 1000 + 10#$us / 1000 )); else ms=$(date +%s%3N 2>/dev/null) || ms=0; fi
  local r=''
  [ -n "$3" ] && r=",\"reason\":\"$3\""
  printf '{"phase":"%s","exitCode":%d,"endedAtMs":%s%s}\n' "$1" "$2" "$ms" "$r" >"$__jobdeck_dir/exit.tmp"
  # The attempt's output ends here: once the exit record is visible the monitor stops whatever is
  # left of the group, and bash must not report that (e.g. "Terminated" for the sync) in the log.
  exec >/dev/null 2>&1
  "$__jobdeck_mv" -f -- "$__jobdeck_dir/exit.tmp" "$__jobdeck_dir/exit"
  # One sync for the record and its name, before the wrapper exits (the exit is what the monitor
  # hears first). A power loss between the rename and this sync can leave a torn record, which is
  # read as malformed: the attempt is lost, as with no record at all.
  [ -n "$__jobdeck_sync" ] && "$__jobdeck_sync" -- "$__jobdeck_dir/exit" "$__jobdeck_dir"
  exit "$2"
}
if ! exec >>"$__jobdeck_log" 2>&1; then
  __jobdeck_finish setup 1 'cannot open the log file'
fi
if ! cd -P -- "$__jobdeck_workdir" 2>/dev/null; then
  printf 'jobdeck: workdir %s does not exist or is not an accessible directory; setup and run not started\n' "$__jobdeck_workdir"
  __jobdeck_finish setup 1 'workdir does not exist or is not an accessible directory'
fi
if [ "$6" = 1 ]; then
  "$BASH" -- "$__jobdeck_dir/setup.sh"
  __jobdeck_rc=$?
  [ "$__jobdeck_rc" -ne 0 ] && __jobdeck_finish setup "$__jobdeck_rc"
fi
[ "$__jobdeck_term" = 1 ] && __jobdeck_finish setup 143 'terminated before run started'
__jobdeck_rc=0
if [ "$7" = 1 ]; then
  "$BASH" -- "$__jobdeck_dir/run.sh"
  __jobdeck_rc=$?
fi
__jobdeck_finish run "$__jobdeck_rc"
`;

function firstExisting(candidates: string[]): string | null {
  for (const c of candidates) if (existsSync(c)) return c;
  return null;
}

let toolPaths: { bash: string; mv: string; sync: string } | null = null;
function tools(): { bash: string; mv: string; sync: string } {
  if (!toolPaths) {
    const bash = firstExisting(['/bin/bash', '/usr/bin/bash', '/usr/local/bin/bash']);
    const mv = firstExisting(['/bin/mv', '/usr/bin/mv']);
    if (!bash) throw new Error('local executor: bash not found in /bin, /usr/bin or /usr/local/bin');
    if (!mv) throw new Error('local executor: mv not found in /bin or /usr/bin');
    toolPaths = { bash, mv, sync: firstExisting(['/bin/sync', '/usr/bin/sync']) ?? '' };
  }
  return toolPaths;
}

/**
 * Resolves a task's workdir: null → the attempt folder; `~` / `~/x` → the server user's home.
 * @throws TypeError for a relative path (the spec layer resolves those before submission).
 */
export function resolveWorkdir(workdir: string | null, attemptDir: string): string {
  if (workdir === null || workdir === '') return attemptDir;
  let dir = workdir;
  if (dir === '~') dir = os.homedir();
  else if (dir.startsWith('~/')) dir = path.join(os.homedir(), dir.slice(2));
  if (!path.isAbsolute(dir)) {
    throw new TypeError(`workdir must be an absolute path or start with ~/, got ${JSON.stringify(workdir)}`);
  }
  return dir;
}

/**
 * Checks a LaunchRequest's envs (shared with the Slurm executor).
 * @throws TypeError for an empty name, a name with "=" or NUL, a non-string value or a value with NUL.
 */
export function validateEnvs(envs: Record<string, string>): void {
  for (const [key, value] of Object.entries(envs)) {
    if (key === '' || key.includes('=') || key.includes('\0')) {
      throw new TypeError(`envs: invalid variable name ${JSON.stringify(key)} (must be non-empty, without "=" or NUL)`);
    }
    if (typeof value !== 'string') throw new TypeError(`envs.${key}: expected a string, got ${typeof value}`);
    if (value.includes('\0')) throw new TypeError(`envs.${key}: a value cannot contain a NUL byte`);
  }
}

/**
 * Reads `<attemptDir>/exit`.
 * @returns the record; null when there is none yet; `{ malformed }` when the file is unreadable
 *   as an exit record (never seen with the atomic rename; reported as a lost attempt).
 * @throws for I/O errors other than "no such file".
 */
export function readExitRecord(attemptDir: string): ExitRecord | null | { malformed: string } {
  const file = path.join(attemptDir, EXIT_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { malformed: `exit file ${file} is not JSON: ${JSON.stringify(text.slice(0, 200))}` };
  }
  const rec = data as Partial<ExitRecord> | null;
  if (!rec || (rec.phase !== 'setup' && rec.phase !== 'run') || !Number.isInteger(rec.exitCode)) {
    return { malformed: `exit file ${file} is not an exit record: ${JSON.stringify(text.slice(0, 200))}` };
  }
  let endedAtMs = Number(rec.endedAtMs);
  if (!Number.isFinite(endedAtMs) || endedAtMs <= 0) {
    try {
      endedAtMs = statSync(file).mtimeMs;
    } catch {
      endedAtMs = Date.now();
    }
  }
  const out: ExitRecord = { phase: rec.phase, exitCode: rec.exitCode as number, endedAtMs };
  if (typeof rec.reason === 'string') out.reason = rec.reason;
  return out;
}

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

/** How an attempt ended, as probe()/watch() report it. */
export type EndResult = Exclude<ProbeResult, { state: 'running' }>;

/** An exit record as a probe result (a malformed record is a lost attempt). Shared with Slurm. */
export function toResult(rec: ExitRecord | { malformed: string }): EndResult {
  if ('malformed' in rec) return { state: 'lost', reason: rec.malformed };
  const r: EndResult = { state: 'exited', phase: rec.phase, exitCode: rec.exitCode, endedAt: new Date(rec.endedAtMs) };
  if (rec.reason) r.reason = rec.reason;
  return r;
}

/** The handle of a wrapper started as `pid` at `startTime` (the launcher writes the same fields). */
function handleOf(pid: number, startTime: string, attemptDir: string): AttemptHandle {
  return { executor: 'local', ref: `${pid}:${startTime}`, pid, pidStartTime: startTime, attemptDir };
}

/** pid and start time of a handle: its fields, or parsed from `ref` ("pid:starttime"). */
function identity(handle: AttemptHandle): { pid: number | null; startTime: string | null } {
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Like sleep, but does not keep the process alive. */
const idle = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

interface ChildEntry {
  pid: number;
  handle: AttemptHandle;
  startTime: string;
  listeners: Set<(r: EndResult) => void>;
  /** Resolves after the wrapper was reaped (or, the launcher gone, its end seen) and the listeners ran. */
  ended: Promise<void>;
  markEnded: () => void;
}

/** The local executor plus what tests and recovery may want to inspect. */
export interface LocalExecutor extends Executor {
  /** True while this instance is the parent of the attempt and has not seen it exit. */
  isParentOf(handle: AttemptHandle): boolean;
}

/**
 * Creates a local executor (see the module doc for the attempt folder). Use getExecutor('local')
 * (lib/executors/index.ts) for the process-wide one; create others only in tests.
 */
export function createLocalExecutor(opts: LocalExecutorOptions = {}): LocalExecutor {
  const pollMs = opts.pollMs ?? 1000;
  const scanner = opts.procScanner ?? sharedProcScanner();
  /** Attempts this instance spawned and that have not been reaped yet, by pid. */
  const children = new Map<number, ChildEntry>();
  /** Who forks the wrappers: the launcher process, or (null) this process itself. */
  const launcher = opts.launcher === undefined ? sharedLauncher() : opts.launcher;

  function childOf(handle: AttemptHandle): ChildEntry | null {
    const { pid, startTime } = identity(handle);
    if (pid === null) return null;
    const e = children.get(pid);
    return e && e.startTime === startTime ? e : null;
  }

  async function launch(req: LaunchRequest): Promise<AttemptHandle> {
    const { bash, mv, sync } = tools();
    validateEnvs(req.envs);
    const attemptDir = path.resolve(req.attemptDir);
    const logPath = path.resolve(req.logPath);
    const workdir = resolveWorkdir(req.workdir, attemptDir);

    // The attempt folder through the libuv thread pool, not the event loop: ~12 file-system calls
    // per launch cost the loop ~3 ms on the bench VM (10 % of the 1,000-job start's profile).
    await fsp.mkdir(attemptDir, { recursive: true, mode: 0o700 }); // scripts may hold secrets
    // A reused folder must not look finished already.
    await Promise.all([EXIT_FILE, 'exit.tmp', HANDLE_FILE, 'setup.sh', 'run.sh'].map((f) => fsp.rm(path.join(attemptDir, f), { force: true })));
    await fsp.mkdir(path.dirname(logPath), { recursive: true });
    await (await fsp.open(logPath, 'a')).close(); // surfaces a bad log path as a launch error
    const wrapperPath = path.join(attemptDir, 'wrapper.sh');
    await Promise.all([
      fsp.writeFile(wrapperPath, WRAPPER),
      req.setup !== null ? fsp.writeFile(path.join(attemptDir, 'setup.sh'), req.setup) : null,
      req.run !== null ? fsp.writeFile(path.join(attemptDir, 'run.sh'), req.run) : null,
    ]);

    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !isServerOnlyEnv(k)) env[k] = v;
    Object.assign(env, req.envs, {
      JOBDECK_JOB_ID: String(req.jobId),
      JOBDECK_TASK_INDEX: String(req.taskIndex),
      JOBDECK_ATTEMPT: String(req.attempt),
    });

    const args = ['-p', '--', wrapperPath, attemptDir, logPath, workdir, mv, sync, req.setup !== null ? '1' : '0', req.run !== null ? '1' : '0'];
    const handleFile = path.join(attemptDir, HANDLE_FILE);
    // The exit may be reported before this function has its entry ready: remember it until then.
    let entry: ChildEntry | undefined;
    let early: [number | null, NodeJS.Signals | null] | undefined;
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => (entry ? reaped(entry, code, signal) : (early = [code, signal]));

    // detached: setsid() — own session and process group, no controlling terminal. stdio to
    // /dev/null (never pipes): the attempt must keep running when this process dies.
    let pid: number;
    let startTime: string;
    if (launcher) {
      // Through the launcher process (lib/executors/launcher.ts): it forks, not this big process.
      let r: Awaited<ReturnType<Launcher['spawn']>>;
      try {
        r = await launcher.spawn({ file: bash, args, cwd: attemptDir, env, handleFile, handle: { executor: 'local', attemptDir } }, onExit);
      } catch (err) {
        if (err instanceof LauncherGoneError) {
          // Its handle file says whether it started. If it did, it runs on as an orphan: not our
          // child, so watched through its exit record like an attempt of an earlier server.
          const orphan = readHandleFile(attemptDir);
          if (orphan) return orphan;
        }
        throw new Error(`local executor: cannot start ${bash}: ${(err as Error).message}`, { cause: err });
      }
      ({ pid, startTime } = r);
      if (r.handleError) {
        // Running, but recovery could not find it from the folder: stop it, report the launch as failed.
        await cancel(handleOf(pid, startTime, attemptDir), { graceMs: 0 }).catch(() => undefined);
        throw new Error(`local executor: cannot write ${handleFile}: ${r.handleError}`);
      }
    } else {
      const child = spawn(bash, args, { detached: true, stdio: 'ignore', cwd: attemptDir, env: env as NodeJS.ProcessEnv });
      if (child.pid === undefined) {
        const err = await new Promise<Error>((resolve) => child.once('error', resolve));
        throw new Error(`local executor: cannot start ${bash}: ${err.message}`, { cause: err });
      }
      pid = child.pid;
      // Read the start time now, synchronously: until the event loop runs again the child cannot
      // have been reaped, so /proc/<pid> exists even if the wrapper already finished (zombie).
      const stat = readProcStat(pid);
      if (!stat) throw new Error(`local executor: started pid ${pid} but /proc/${pid}/stat is unreadable`);
      startTime = stat.startTime;
      const tmp = `${handleFile}.tmp`;
      writeFileSync(tmp, JSON.stringify(handleOf(pid, startTime, attemptDir)) + '\n');
      renameSync(tmp, handleFile);
      child.once('exit', onExit);
      child.on('error', (err) => logger().warn({ err, pid }, 'local executor: child process error'));
      child.unref();
    }
    const handle = handleOf(pid, startTime, attemptDir);

    let markEnded!: () => void;
    entry = {
      pid,
      handle,
      startTime,
      listeners: new Set(),
      ended: new Promise<void>((r) => (markEnded = r)),
      markEnded,
    };
    children.set(pid, entry);
    if (early) reaped(entry, ...early);
    return handle;
  }

  /** The wrapper of `entry` was reaped (by us or the launcher): report how it ended. */
  function reaped(entry: ChildEntry, code: number | null, signal: NodeJS.Signals | null): void {
    let result: EndResult;
    try {
      const rec = readExitRecord(entry.handle.attemptDir);
      result = rec
        ? toResult(rec)
        : { state: 'lost', reason: `process ${entry.pid} ended (${signal ? `signal ${signal}` : `exit code ${code}`}) and recorded no exit status` };
    } catch (err) {
      result = { state: 'lost', reason: `process ${entry.pid} ended but its exit file is unreadable: ${(err as Error).message}` };
    }
    settle(entry, result);
  }

  function settle(entry: ChildEntry, result: EndResult): void {
    if (children.get(entry.pid) === entry) children.delete(entry.pid);
    for (const l of entry.listeners) l(result);
    entry.listeners.clear();
    entry.markEnded();
  }

  // The launcher died: its wrappers run on as orphans, and nobody will report their exit. Watch
  // their exit records instead (as for an attempt of an earlier server) and tell the listeners.
  launcher?.onDeath((pids) => {
    for (const pid of pids) {
      const entry = children.get(pid);
      if (!entry) continue;
      children.delete(pid); // no longer our child: probe() must not wait for a reap
      watchExitRecord(entry.handle, (r) => settle(entry, r), { name: 'local executor', probe, pollMs });
    }
  });

  async function probe(handle: AttemptHandle): Promise<ProbeResult> {
    const dir = handle.attemptDir;
    const first = readExitRecord(dir);
    if (first) return toResult(first);
    await opts.hooks?.afterFirstExitRead?.(handle);
    const { pid, startTime } = identity(handle);
    if (pid === null) return { state: 'lost', reason: `the handle ${JSON.stringify(handle.ref)} names no process` };
    const stat = readProcStat(pid);
    if (stat && stat.startTime === startTime) {
      if (isLiveState(stat.state)) return { state: 'running' };
      // Our own unreaped zombie: its exit is about to be reported; wait for the reap first.
      const own = childOf(handle);
      if (own) await Promise.race([own.ended, idle(5000)]);
    }
    // Gone (or a zombie): the exit file may have been renamed in between the two reads.
    const second = readExitRecord(dir);
    if (second) return toResult(second);
    if (!stat) return { state: 'lost', reason: `process ${pid} is gone and recorded no exit status` };
    if (stat.startTime !== startTime) {
      return { state: 'lost', reason: `pid ${pid} was reused by another process (start time ${stat.startTime}, expected ${startTime})` };
    }
    return { state: 'lost', reason: `process ${pid} exited without recording an exit status` };
  }

  function watch(handle: AttemptHandle, listener: ExitListener): () => void {
    return watchExitRecord(handle, listener, {
      name: 'local executor',
      probe,
      pollMs,
      // We are the parent: the child's 'exit' event is the immediate notification.
      direct: (fire) => {
        const own = childOf(handle);
        if (!own) return null;
        own.listeners.add(fire);
        return () => own.listeners.delete(fire);
      },
    });
  }

  async function cancel(handle: AttemptHandle, cancelOpts: { graceMs?: number } = {}): Promise<void> {
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

    // Scans come from the shared scanner: a burst of cancels (cancel all) shares one scan per
    // round instead of each rescanning /proc, and a scan yields to the event loop.
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

  function capacity(): { cpus: number } {
    return { cpus: opts.cpus ?? (Number(process.env.JOBDECK_CPUS) || os.availableParallelism()) };
  }

  return {
    name: 'local',
    launch,
    probe,
    watch,
    cancel,
    capacity,
    findHandle: readHandleFile,
    isParentOf: (handle) => childOf(handle) !== null,
  };
}

/**
 * Watches one attempt for its end, for every executor whose attempts write the exit record
 * (local, Slurm): `direct` may offer an immediate notification (the local parent's child 'exit'
 * event); otherwise the attempt folder is watched for the rename exit.tmp → exit (fs.watch), and
 * `probe` is polled every `pollMs` as a fallback that also sees `lost`. Calls `listener` at most
 * once and never from inside this call. Returns the unsubscribe function.
 */
export function watchExitRecord(
  handle: AttemptHandle,
  listener: ExitListener,
  o: {
    name: string;
    probe: (h: AttemptHandle) => Promise<ProbeResult>;
    pollMs: number;
    direct?: (fire: (r: EndResult) => void) => (() => void) | null;
  },
): () => void {
  let done = false;
  const cleanups: Array<() => void> = [];
  const stop = () => {
    done = true;
    for (const c of cleanups.splice(0)) c();
  };
  const fire = (r: EndResult) => {
    if (done) return;
    stop();
    try {
      listener(r);
    } catch (err) {
      logger().error({ err, ref: handle.ref }, `${o.name}: exit listener threw`);
    }
  };
  const direct = o.direct?.(fire);
  if (direct) {
    cleanups.push(direct);
    return stop;
  }
  const checkFile = () => {
    if (done) return;
    try {
      const rec = readExitRecord(handle.attemptDir);
      if (rec) fire(toResult(rec));
    } catch {
      /* the poll will retry */
    }
  };
  try {
    const w: FSWatcher = fsWatch(handle.attemptDir, { persistent: false }, (_event, filename) => {
      if (!filename || filename === EXIT_FILE) checkFile();
    });
    w.on('error', () => w.close());
    cleanups.push(() => w.close());
  } catch {
    /* no such folder or no inotify: the poll alone decides */
  }
  let probing = false;
  let failures = 0;
  const poll = async () => {
    if (done || probing) return;
    probing = true;
    try {
      const r = await o.probe(handle);
      failures = 0;
      if (r.state !== 'running') fire(r);
    } catch (err) {
      // A backend outage fails every poll: say so once, then every 100th time.
      if (failures++ % 100 === 0) logger().warn({ err, ref: handle.ref, failures }, `${o.name}: probe failed in watch; will retry`);
    } finally {
      probing = false;
    }
  };
  const timer = setInterval(poll, o.pollMs);
  timer.unref();
  cleanups.push(() => clearInterval(timer));
  // First look right away (asynchronously: the listener is never called from inside watch()).
  setImmediate(poll);
  return stop;
}
