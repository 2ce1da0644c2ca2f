import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { setting } from '../../config';
import { cgroupMounts, removeGroupTree } from './cgroup';
import { apiEnv, LaunchPrecheckError, LOCAL_NODE_IP, taskEnv } from '../wrapper';
import type { LaunchRequest } from '../types';

/**
 * Containers on the local executor (docs/design.md §7 "Containers"): a task with `image_id:
 * docker:IMAGE` runs its setup and run inside one container of that image per attempt, started
 * with the container runtime the operator configures (JOBDECK_CONTAINER_RUNTIME: rootful Podman,
 * or Docker). SkyPilot runs a docker task's setup and run in the same container, with the host's
 * network; so does this:
 *
 * - the enter step of such an attempt (CONTAINER_ENTER_PROGRAM, in place of enter.ts's) starts,
 *   at the attempt's first phase, a keeper container `jobdeck-<job>-<task>-<attempt>-<hash of the
 *   attempt folder>` (`run -d --init`, the attempt's control group as its `--cgroup-parent`, the
 *   workdir and the file_mounts bind-mounted at their own paths, `--user` the job's uid:gid), then
 *   execs `<runtime> exec` of the phase into it: the runtime's CLI is the wrapper's child, in
 *   the wrapper's process group, its output the wrapper's log descriptor — the log is written as
 *   today, and a jobdeck that dies (kill -9) leaves wrapper, CLI and container running;
 * - stopping the attempt (cancel, the leftover reap) removes the container: `<runtime> rm -f -t
 *   <grace>` sends the keeper SIGTERM, which passes it to every process of the job and waits for
 *   them (the grace, then SIGKILL) — the same end as a host attempt's process group.
 *
 * The runtime's own environment is fixed (`env -i PATH=…`): nothing of the job's reaches a root
 * process (a task's CONTAINERS_CONF or DOCKER_HOST would steer it). The job's environment goes
 * into the container as a file (`/.jobdeck/env.sh`, read-only, the job's own), never on a
 * command line that other users could read in /proc.
 */

/** The runtime the operator configured (JOBDECK_CONTAINER_RUNTIME), resolved. */
export interface ContainerRuntime {
  kind: 'podman' | 'docker';
  /** Absolute path of its CLI. */
  bin: string;
  /** JOBDECK_CONTAINER_OPTIONS: given to every call, before the subcommand. */
  options: string[];
}

/** The attempt folder's files of a container attempt. */
export const CONTAINER_FILE = 'container';
const RUN_FILE = 'container.run';
const EXEC_FILE = 'container.exec';
/** Made by the enter step once the keeper runs: later phases exec into it. */
export const UP_FILE = 'container.up';
/** The folder mounted at /.jobdeck: env.sh, setup.sh, run.sh (the container user's, read-only). */
const INNER_DIR = 'container.d';
/** Every file launch writes for a container (cleared from a reused attempt folder first). */
export const CONTAINER_FILES = [CONTAINER_FILE, RUN_FILE, EXEC_FILE, UP_FILE] as const;

/** Where the runtime's own PATH points (its environment is fixed: see the module comment). */
const RUNTIME_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The runtime JOBDECK_CONTAINER_RUNTIME names, its CLI found in /usr/bin, /usr/local/bin or /bin.
 * @returns null when `off` (the default).
 * @throws Error when the CLI is not installed.
 */
export function containerRuntimeFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ContainerRuntime | null {
  const kind = setting('JOBDECK_CONTAINER_RUNTIME', env);
  if (kind === 'off') return null;
  const bin = ['/usr/bin', '/usr/local/bin', '/bin'].map((d) => path.join(d, kind)).find((p) => existsSync(p));
  if (!bin) throw new Error(`JOBDECK_CONTAINER_RUNTIME=${kind}: ${kind} is not installed (looked in /usr/bin, /usr/local/bin and /bin)`);
  const options = (setting('JOBDECK_CONTAINER_OPTIONS', env) ?? '').split(/\s+/).filter(Boolean);
  return { kind, bin, options };
}

/**
 * The start check: the runtime answers `info` (a daemon that is down, a missing OCI runtime,
 * options it refuses). Synchronous: once, when the executor is made.
 * @throws Error with the runtime's own message; the server does not start without its runtime.
 */
export function checkContainerRuntime(rt: ContainerRuntime): void {
  try {
    execFileSync(rt.bin, [...rt.options, 'info'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000, env: { PATH: RUNTIME_PATH } as unknown as NodeJS.ProcessEnv });
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? '').trim();
    throw new Error(`JOBDECK_CONTAINER_RUNTIME=${rt.kind}: \`${rt.kind} info\` failed: ${stderr || (err as Error).message}`, { cause: err });
  }
}

/** The attempt's container name: deterministic, so cancel and recovery find it from the folder; the folder's hash keeps servers of one machine apart. */
export function containerName(req: Pick<LaunchRequest, 'jobId' | 'taskIndex' | 'attempt'>, attemptDir: string): string {
  const h = createHash('sha256').update(path.resolve(attemptDir)).digest('hex').slice(0, 10);
  return `jobdeck-${req.jobId}-${req.taskIndex}-${req.attempt}-${h}`;
}

/** A shell word: single-quoted, `'` as `'\''`. */
const quote = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`;

/**
 * env.sh: the job's environment in the container — the task's envs, jobdeck's and SkyPilot's
 * variables, JOBDECK_URL/TOKEN (wrapper.ts taskEnv, apiEnv); PATH, HOME and the rest are the image's.
 * @throws LaunchPrecheckError for a name the container's shell cannot export.
 */
export function containerEnvScript(req: LaunchRequest): string {
  const env = { ...taskEnv(req, 'local', LOCAL_NODE_IP), ...apiEnv(req) };
  return Object.entries(env)
    .map(([k, v]) => {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new LaunchPrecheckError(`envs: ${JSON.stringify(k)} cannot be passed into a container (a name of letters, digits and _)`);
      return `export ${k}=${quote(v)}\n`;
    })
    .join('');
}

/**
 * `--ulimit`: open files at this process's own limits, processes at the attempt's process cap
 * (JOBDECK_ATTEMPT_PIDS_MAX) within them. The runtime's defaults may exceed what the host
 * allows, and the container then does not start ("setrlimit: operation not permitted").
 */
function ulimits(pidsMax: number): string[] {
  let text = '';
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return [];
  }
  const limit = (label: string) => {
    const m = new RegExp(`^${label}\\s+(\\d+|unlimited)\\s+(\\d+|unlimited)`, 'm').exec(text);
    return m ? { soft: m[1] === 'unlimited' ? Infinity : Number(m[1]), hard: m[2] === 'unlimited' ? Infinity : Number(m[2]) } : null;
  };
  const out: string[] = [];
  const files = limit('Max open files');
  if (files && Number.isFinite(files.hard)) out.push('--ulimit', `nofile=${Math.min(files.soft, files.hard)}:${files.hard}`);
  const procs = limit('Max processes');
  const n = Math.min(pidsMax, procs?.hard ?? Infinity);
  out.push('--ulimit', `nproc=${n}:${n}`);
  return out;
}

/** The device files of the granted GPUs and NVIDIA's shared control files, where they exist. */
function gpuDevices(req: LaunchRequest): string[] {
  const granted = req.gpus?.devices?.map((d) => d.index) ?? [];
  if (!granted.length) return [];
  const files = [...granted.map((i) => `/dev/nvidia${i}`), '/dev/nvidiactl', '/dev/nvidia-uvm', '/dev/nvidia-uvm-tools'];
  return files.filter((f) => existsSync(f)).flatMap((f) => ['--device', f]);
}

/** A bind mount of `p` at its own path. @throws LaunchPrecheckError for a path `-v` cannot carry. */
function bind(p: string): string[] {
  checkPath(p);
  return ['-v', `${p}:${p}`];
}

/** The attempt's container.d at /.jobdeck, read-only. */
function innerBind(inner: string): string[] {
  checkPath(inner);
  return ['-v', `${inner}:/.jobdeck:ro`];
}

function checkPath(p: string): void {
  if (/[:,\n]/.test(p)) throw new LaunchPrecheckError(`cannot bind-mount ${JSON.stringify(p)} into a container: the path has a ":" "," or newline`);
}

// The keeper: the container's one long process. On SIGTERM (`rm -f -t`, through --init) it
// passes the signal to every process of the job and waits for them; then the container ends.
const KEEPER = 'trap "kill -TERM -1 2>/dev/null; wait; while kill -0 -1 2>/dev/null; do sleep 0.1; done; exit 0" TERM; while :; do sleep 3600 & wait $!; done';
// A phase in the container: the job's environment, then the script (sh: any image has one).
const PHASE = '. /.jobdeck/env.sh && exec sh "$1"';

/** What prepareContainer needs besides the request. */
export interface ContainerContext {
  rt: ContainerRuntime;
  /** The image (without `docker:`). */
  image: string;
  /** The resolved workdir (absolute). */
  workdir: string;
  /** The attempt's control group relative to each hierarchy (`/jobdeck/attempt-…`), or null: none. */
  cgroupParent: string | null;
  /** Most processes of the attempt (JOBDECK_ATTEMPT_PIDS_MAX): the container's `nproc`. */
  pidsMax: number;
}

/**
 * Writes a container attempt's files (see the module comment): the keeper's and the phases'
 * command lines (NUL-separated), the `container` record cancel reads, and `container.d/` —
 * env.sh and the scripts, owned by the container's user (the job's account, else jobdeck's own
 * uid: the job never runs with more rights than without the container).
 * @throws LaunchPrecheckError for an env name or a path a container cannot take.
 */
export async function prepareContainer(req: LaunchRequest, attemptDir: string, c: ContainerContext): Promise<void> {
  const { rt, image, workdir } = c;
  const name = containerName(req, attemptDir);
  const uid = req.account?.uid ?? process.getuid?.() ?? 0;
  const gid = req.account?.gid ?? process.getgid?.() ?? 0;
  const inner = path.join(attemptDir, INNER_DIR);
  const envText = containerEnvScript(req);
  const mounts = [...new Set(req.container?.mounts ?? [])].filter((m) => m !== workdir && !m.startsWith(`${workdir}/`));
  const run = [
    rt.bin, ...rt.options, 'run', '-d', ...(rt.kind === 'podman' ? ['--replace'] : []), '--pull=never', '--init',
    '--name', name, '--label', `jobdeck.attempt=${path.resolve(attemptDir)}`,
    '--network=host', '--log-driver=none', '--user', `${uid}:${gid}`, '--workdir', workdir,
    ...bind(workdir), ...mounts.flatMap((m) => bind(m)), ...innerBind(inner),
    ...ulimits(c.pidsMax), ...(c.cgroupParent ? ['--cgroup-parent', c.cgroupParent] : []), ...gpuDevices(req),
    // The job's account gets no capabilities back inside (it has none outside).
    ...(req.account ? ['--cap-drop=all', '--security-opt=no-new-privileges'] : []),
    image, 'sh', '-c', KEEPER,
  ];
  const exec = [rt.bin, ...rt.options, 'exec', '--workdir', workdir, name, 'sh', '-c', PHASE, 'jobdeck'];
  await fsp.rm(inner, { recursive: true, force: true });
  await fsp.mkdir(inner, { mode: 0o700 });
  await Promise.all([
    fsp.writeFile(path.join(inner, 'env.sh'), envText, { mode: 0o400 }),
    req.setup !== null ? fsp.writeFile(path.join(inner, 'setup.sh'), req.setup, { mode: 0o400 }) : null,
    req.run !== null ? fsp.writeFile(path.join(inner, 'run.sh'), req.run, { mode: 0o400 }) : null,
    fsp.writeFile(path.join(attemptDir, RUN_FILE), run.map((a) => `${a}\0`).join(''), { mode: 0o600 }),
    fsp.writeFile(path.join(attemptDir, EXEC_FILE), exec.map((a) => `${a}\0`).join(''), { mode: 0o600 }),
  ]);
  for (const f of ['env.sh', 'setup.sh', 'run.sh', '.']) if (existsSync(path.join(inner, f))) await fsp.chown(path.join(inner, f), uid, gid);
  await fsp.chmod(inner, 0o500);
  if (rt.kind === 'docker') await runtime(rt, ['rm', '-f', name]).catch(() => undefined);
  await fsp.writeFile(path.join(attemptDir, CONTAINER_FILE), JSON.stringify({ kind: rt.kind, bin: rt.bin, options: rt.options, name, cgroupParent: c.cgroupParent }) + '\n', { mode: 0o600 });
}

/** One call of the runtime with its fixed environment. @returns stdout. */
function runtime(rt: Pick<ContainerRuntime, 'bin' | 'options'>, args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(rt.bin, [...rt.options, ...args], { env: { PATH: RUNTIME_PATH } as unknown as NodeJS.ProcessEnv, timeout: timeoutMs }, (err, stdout, stderr) => (err ? reject(new Error(`${path.basename(rt.bin)} ${args[0]}: ${String(stderr).trim() || err.message}`)) : resolve(String(stdout))));
  });
}

/**
 * Removes the attempt's container, if it has one (its `container` record): SIGTERM to the job's
 * processes through the keeper, SIGKILL after `graceMs` (whole seconds, rounded up). Idempotent:
 * a container already gone is no error. Nothing to do for a host attempt.
 * @throws Error when the runtime fails for another reason (the reap tries again).
 */
export async function removeContainer(attemptDir: string, graceMs: number): Promise<void> {
  let rec: { kind?: ContainerRuntime['kind']; bin: string; options: string[]; name: string; cgroupParent?: string | null };
  try {
    rec = JSON.parse(readFileSync(path.join(attemptDir, CONTAINER_FILE), 'utf8'));
  } catch {
    return;
  }
  const out = await runtime(rec, ['ps', '-a', '-q', '--filter', `name=^${rec.name}$`]);
  const grace = String(Math.ceil(graceMs / 1000));
  if (out.trim() !== '') {
    // Docker's rm has no grace of its own: stop (SIGTERM, the grace, SIGKILL) first.
    if (rec.kind === 'docker') await runtime(rec, ['stop', '-t', grace, rec.name], graceMs + 120_000).catch(() => undefined);
    await runtime(rec, rec.kind === 'docker' ? ['rm', '-f', rec.name] : ['rm', '-f', '-t', grace, rec.name], graceMs + 120_000);
  }
  // The runtime made the attempt's group in every hierarchy (cpuset, freezer… too), and leaves
  // its own empty ones (conmon's): removed here; those jobdeck made go with the reap's last step.
  if (rec.cgroupParent) for (const m of cgroupMounts()) await removeGroupTree(path.join(m, rec.cgroupParent));
}

/**
 * The enter step of a container attempt (see the module comment), bash, static text but for the
 * first line: `enter.sh ATTEMPT_DIR -- BASH -- SCRIPT`. With an account it first checks, as the
 * account, that the workdir is one it may enter (the bind mount would let it in otherwise); it
 * starts the keeper once (`container.up`), then execs the runtime's `exec` of the phase with a
 * fixed environment.
 */
export function containerEnterProgram(bash: string): string {
  return [
    `#!${bash} -p`,
    '# jobdeck container enter step (generated; do not edit): ATTEMPT_DIR -- BASH -- SCRIPT',
    '__jobdeck_dir=$1',
    '__jobdeck_phase=/.jobdeck/run.sh',
    '[ "$5" = "$__jobdeck_dir/setup.sh" ] && __jobdeck_phase=/.jobdeck/setup.sh',
    'if [ -f "$__jobdeck_dir/account" ]; then',
    '  if ! { IFS= read -r __jobdeck_uid && IFS= read -r __jobdeck_gid && IFS= read -r __jobdeck_setpriv; } <"$__jobdeck_dir/account"; then',
    '    printf \'jobdeck: cannot read the attempt\'"\'"\'s account; not started\\n\' >&2; exit 126',
    '  fi',
    '  if ! "$__jobdeck_setpriv" --reuid="$__jobdeck_uid" --regid="$__jobdeck_gid" --init-groups -- "$BASH" -p -c \'cd -P -- "$1"\' jobdeck-enter "$PWD" 2>/dev/null; then',
    '    printf \'jobdeck: workdir %s is not an accessible directory for the job\'"\'"\'s account; not started\\n\' "$PWD" >&2; exit 1',
    '  fi',
    'fi',
    'if [ ! -e "$__jobdeck_dir/container.up" ]; then',
    '  mapfile -d \'\' __jobdeck_run <"$__jobdeck_dir/container.run" || exit 126',
    '  /usr/bin/env -i PATH=' + RUNTIME_PATH + ' "${__jobdeck_run[@]}" >/dev/null || exit 125',
    '  : >"$__jobdeck_dir/container.up"',
    'fi',
    'mapfile -d \'\' __jobdeck_exec <"$__jobdeck_dir/container.exec" || exit 126',
    'exec /usr/bin/env -i PATH=' + RUNTIME_PATH + ' "${__jobdeck_exec[@]}" "$__jobdeck_phase"',
    '',
  ].join('\n');
}
