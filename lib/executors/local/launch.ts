import { spawn } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, openSync, renameSync, writeSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { logger } from '../../log';
import { EXIT_FILE, HANDLE_FILE } from '../attempt-record';
import { CGROUP_FILE, cgroupName, createAttemptCgroup, OOM_FILE } from './cgroup';
import { CONTAINER_FILES, containerEnterProgram, prepareContainer, type ContainerRuntime } from './container';
import { ENTER_FILE, enterProgram } from './enter';
import type { LocalLimits } from './limits';
import { LauncherGoneError, type Launcher } from './launcher';
import { hostIdentity } from '../../proc';
import type { ExpectedChild, LocalChildren } from './children';
import { handleOf, readHandleFile } from './handle';
import { readProcStat } from './proc';
import type { AttemptHandle, LaunchRequest } from '../types';
import { attemptEnv, LaunchPrecheckError, LOCAL_NODE_IP, resolveWorkdir, validateEnvs, workspaceOf, WRAPPER } from '../wrapper';
import { ACCOUNT_FILE, ENV_FILE, prepareAccount } from './account';

/**
 * Starting a local attempt: the attempt folder (wrapper.sh, enter.sh, setup.sh, run.sh, the
 * workspace `work/`; a reused folder cleared of an earlier end; with an OS account, its files and
 * modes: lib/executors/local/account.ts), then the wrapper spawned detached — setsid(), stdio on /dev/null,
 * so it outlives jobdeck — by the attempt launcher or by this process, and its handle written
 * to the folder before launch() answers. Kept apart from probe/watch/cancel because it is the
 * only part that creates processes and files (docs/design.md, "Executors").
 */

/** What launchLocal needs from the executor that composes it. */
export interface LaunchDeps {
  /** Who forks the wrappers: the launcher process, or (null) this process itself. */
  launcher: Launcher | null;
  /** Where the spawned wrapper is tracked until its exit is reported. */
  children: LocalChildren;
  /** Stops a started wrapper (used when its handle file could not be written). */
  cancel(handle: AttemptHandle, opts: { graceMs?: number }): Promise<void>;
  /** How attempts are held to their resources (control groups, or none: lib/executors/local/limits.ts). */
  limits: LocalLimits;
  /** The executor's GPU device indices (those not granted to the attempt are closed to it where the devices controller is). */
  gpuIndices: readonly number[];
  /** The container runtime `image_id: docker:…` runs with (lib/executors/local/container.ts); null: none configured. */
  containers: ContainerRuntime | null;
}

function firstExisting(candidates: string[]): string | null {
  for (const c of candidates) if (existsSync(c)) return c;
  return null;
}

let toolPaths: { bash: string; mv: string; sync: string } | null = null;
/** Absolute paths the wrapper is started with (the task's envs may change PATH). */
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

/** Creates the attempt folder and the log file; writes the scripts. @returns the wrapper's path. */
async function prepareAttemptDir(req: LaunchRequest, attemptDir: string, logPath: string): Promise<string> {
  // The attempt folder through the libuv thread pool, not the event loop: ~12 file-system calls
  // per launch cost the loop ~3 ms on the bench VM (10 % of the 1,000-job start's profile).
  const created = await fsp.mkdir(attemptDir, { recursive: true, mode: 0o700 }); // scripts may hold secrets
  // A reused folder must not look finished already (a new one is empty: 13 removals saved).
  if (created === undefined) await Promise.all([EXIT_FILE, 'exit.tmp', HANDLE_FILE, 'setup.sh', 'run.sh', CGROUP_FILE, OOM_FILE, ENV_FILE, ACCOUNT_FILE, ...CONTAINER_FILES].map((f) => fsp.rm(path.join(attemptDir, f), { force: true })));
  await fsp.mkdir(path.dirname(logPath), { recursive: true });
  // Surfaces a bad log path as a launch error. Only jobdeck reads it (other users through the API).
  await (await fsp.open(logPath, 'a', 0o600)).close();
  const wrapperPath = path.join(attemptDir, 'wrapper.sh');
  await Promise.all([
    // The handle is written after the spawn, when the task may already have filled the disk:
    // its blocks are taken now, and overwritten in place then (docs/design.md §7).
    fsp.writeFile(path.join(attemptDir, `${HANDLE_FILE}.tmp`), ' '.repeat(HANDLE_RESERVE_BYTES)),
    fsp.writeFile(wrapperPath, WRAPPER),
    // The one door setup and run start through (docs/design.md §7 "The enter step"; into the
    // attempt's container for `image_id: docker:…`, §7 "Containers").
    fsp.writeFile(path.join(attemptDir, ENTER_FILE), req.container ? containerEnterProgram(tools().bash) : enterProgram(tools().bash), { mode: 0o700 }),
    req.setup !== null ? fsp.writeFile(path.join(attemptDir, 'setup.sh'), req.setup) : null,
    req.run !== null ? fsp.writeFile(path.join(attemptDir, 'run.sh'), req.run) : null,
  ]);
  return wrapperPath;
}

/** One wrapper to start: program, arguments, folder, environment and where its handle goes. */
interface Spawn {
  bash: string;
  args: string[];
  attemptDir: string;
  env: Record<string, string>;
  handleFile: string;
}

/**
 * Spawns through the launcher process (lib/executors/local/launcher.ts): it forks, not this big
 * process. @returns the wrapper's pid and start time, or the handle of a wrapper left running
 * as an orphan by a launcher that died before answering.
 */
async function spawnByLauncher(launcher: Launcher, s: Spawn, child: ExpectedChild, deps: LaunchDeps): Promise<{ pid: number; startTime: string } | AttemptHandle> {
  const { bash, args, attemptDir, env, handleFile } = s;
  let r: Awaited<ReturnType<Launcher['spawn']>>;
  try {
    // The launcher publishes the exit record (rename, then fsync) after the exit, sparing the wrapper `mv` and `sync`.
    const durable = [path.join(attemptDir, EXIT_FILE), attemptDir];
    r = await launcher.spawn({ file: bash, args, cwd: attemptDir, env, handleFile, handle: { executor: 'local', hostId: hostIdentity(), attemptDir }, durable }, child.onExit);
  } catch (err) {
    if (err instanceof LauncherGoneError) {
      // Its handle file says whether it started. If it did, it runs on as an orphan: not our
      // child, so watched through its exit record like an attempt of an earlier server.
      const orphan = readHandleFile(attemptDir);
      if (orphan) return orphan;
    }
    throw new Error(`local executor: cannot start ${bash}: ${(err as Error).message}`, { cause: err });
  }
  const { pid, startTime } = r;
  if (r.handleError) {
    // Running, but recovery could not find it from the folder: stop it, report the launch as failed.
    await deps.cancel(handleOf(pid, startTime, attemptDir), { graceMs: 0 }).catch(() => undefined);
    throw new Error(`local executor: cannot write ${handleFile}: ${r.handleError}`);
  }
  return { pid, startTime };
}

/** Why a container attempt cannot start here (the spec refuses it at submit: a job stored before the runtime was turned off still gets here). */
export const CONTAINER_RUNTIME_OFF = 'image_id "docker:…" needs a container runtime, and this server has none (JOBDECK_CONTAINER_RUNTIME is off)';

/** Bytes taken for the handle file before the spawn; a handle is ~200 bytes. */
const HANDLE_RESERVE_BYTES = 4096;

/**
 * Writes `text` into the reserved file `file` without giving its blocks back first (no O_TRUNC,
 * then cut to length), so a disk the task filled meanwhile still takes it; a file that is not
 * there is created.
 */
function overwriteReserved(file: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch {
    fd = openSync(file, 'w');
  }
  try {
    const b = Buffer.from(text);
    writeSync(fd, b, 0, b.length, 0);
    ftruncateSync(fd, b.length);
  } finally {
    closeSync(fd);
  }
}

/** Spawns the wrapper from this process and writes its handle file. */
async function spawnHere(s: Spawn, child: ExpectedChild): Promise<{ pid: number; startTime: string }> {
  const { bash, args, attemptDir, env, handleFile } = s;
  const proc = spawn(bash, args, { detached: true, stdio: 'ignore', cwd: attemptDir, env: env as NodeJS.ProcessEnv });
  if (proc.pid === undefined) {
    const err = await new Promise<Error>((resolve) => proc.once('error', resolve));
    throw new Error(`local executor: cannot start ${bash}: ${err.message}`, { cause: err });
  }
  const pid = proc.pid;
  // Read the start time now, synchronously: until the event loop runs again the child cannot
  // have been reaped, so /proc/<pid> exists even if the wrapper already finished (zombie).
  const stat = readProcStat(pid);
  if (!stat) throw new Error(`local executor: started pid ${pid} but /proc/${pid}/stat is unreadable`);
  const startTime = stat.startTime;
  const tmp = `${handleFile}.tmp`;
  overwriteReserved(tmp, JSON.stringify(handleOf(pid, startTime, attemptDir)) + '\n');
  renameSync(tmp, handleFile);
  proc.once('exit', child.onExit);
  proc.on('error', (err) => logger().warn({ err, pid }, 'local executor: child process error'));
  proc.unref();
  return { pid, startTime };
}

/**
 * The attempt's control group, where groups can be made (lib/executors/local/cgroup.ts): memory
 * (swap included) to `resources.memory`, CPU time to `resources.cpus` (a quota), the process cap,
 * and the GPU device files of the executor not granted to it closed. Recorded in the attempt
 * folder, where the enter step finds it.
 * @throws Error when the group cannot be made or a limit written: the launch fails (a lost
 *   attempt, recovered), rather than run without the limits it was admitted with.
 */
async function attemptCgroup(req: LaunchRequest, attemptDir: string, deps: LaunchDeps): Promise<void> {
  const { support, pidsMax } = deps.limits;
  if (support.version === null) return;
  const granted = new Set(req.gpus?.devices?.map((d) => d.index) ?? []);
  const deniedGpus = deps.gpuIndices.filter((i) => !granted.has(i));
  try {
    await createAttemptCgroup(support, attemptDir, { cpus: req.cpus, pidsMax, ...(req.memoryBytes !== undefined ? { memoryBytes: req.memoryBytes } : {}), ...(deps.gpuIndices.length ? { deniedGpus } : {}) });
  } catch (err) {
    throw new Error(`local executor: cannot make the attempt's control group: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Starts one attempt (see the module doc). @returns its handle, also written to
 * `<attemptDir>/handle.json`.
 * @throws LaunchPrecheckError for bad envs, a relative workdir or more than one node (the spec
 *   refuses num_nodes > 1 on the local executor: docs/spec.md "num_nodes"); Error when the folder, the log file or
 *   the process cannot be made.
 */
export async function launchLocal(req: LaunchRequest, deps: LaunchDeps): Promise<AttemptHandle> {
  const { bash, mv, sync } = tools();
  validateEnvs(req.envs);
  if ((req.nodes ?? 1) > 1) throw new LaunchPrecheckError(`the local executor runs a task on this one machine, not on ${req.nodes} nodes (num_nodes needs infra: slurm)`);
  const attemptDir = path.resolve(req.attemptDir);
  const logPath = path.resolve(req.logPath);
  const account = req.account;
  const workdir = resolveWorkdir(req.workdir, attemptDir, account?.home);
  if (req.container && !deps.containers) throw new LaunchPrecheckError(CONTAINER_RUNTIME_OFF);
  const wrapperPath = await prepareAttemptDir(req, attemptDir, logPath);
  await attemptCgroup(req, attemptDir, deps);
  // With an account, the job's environment goes to the enter step in a file and the wrapper gets
  // none of it (lib/executors/local/account.ts); without, the wrapper passes it on (single-user).
  let env: Record<string, string>;
  if (account) env = await prepareAccount({ ...req, account }, attemptDir, logPath);
  else {
    await fsp.mkdir(workspaceOf(attemptDir), { recursive: true, mode: 0o700 });
    env = attemptEnv(req, 'local', LOCAL_NODE_IP);
  }
  if (req.container && deps.containers) {
    // The container's group goes below the attempt's, in every hierarchy: its limits hold it.
    const s = deps.limits.support;
    const cgroupParent = s.version !== null && existsSync(path.join(attemptDir, CGROUP_FILE)) ? `/${s.parent}/${cgroupName(attemptDir)}` : null;
    await prepareContainer(req, attemptDir, { rt: deps.containers, image: req.container.image, workdir, cgroupParent, pidsMax: deps.limits.pidsMax });
  }
  // Only the launcher says it publishes the record (a task's env of that name would leave it at exit.tmp, unsynced).
  delete env.__jobdeck_syncer;
  // $8 empty: the exit record's default name; $9: the enter program (lib/executors/wrapper.ts).
  const args = ['-p', '--', wrapperPath, attemptDir, logPath, workdir, mv, sync, req.setup !== null ? '1' : '0', req.run !== null ? '1' : '0', '', path.join(attemptDir, ENTER_FILE)];
  const s: Spawn = { bash, args, attemptDir, env, handleFile: path.join(attemptDir, HANDLE_FILE) };
  // The exit may be reported before this function has its entry ready: remember it until then.
  const child = deps.children.expect();
  // detached: setsid() — own session and process group, no controlling terminal. stdio to
  // /dev/null (never pipes): the attempt must keep running when this process dies.
  const started = deps.launcher ? await spawnByLauncher(deps.launcher, s, child, deps) : await spawnHere(s, child);
  if ('ref' in started) return started;
  const handle = handleOf(started.pid, started.startTime, attemptDir);
  child.register(started.pid, started.startTime, handle);
  return handle;
}
