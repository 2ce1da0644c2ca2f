import { closeSync, fchownSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setting } from '../../config';
import { rankLogPath } from '../../jobs/paths';
import { EXIT_FILE, HANDLE_FILE, HOSTS_FILE, JOB_DIR } from '../attempt-record';
import { freshOwnFolder, handOver, passable } from '../hand-over';
import { BATCH_FILE, ensureController, firstLine, GROUP_MARK, runSlurm } from './cli';
import { GANG_BATCH, gangLeftovers, LOGS_FILE, RANK_FILE, RANK_SCRIPT } from './gang';
import { groupHostArgs, joinGroup } from './group';
import type { AttemptHandle, LaunchRequest } from '../types';
import { accountEnv, apiEnv, envFileText, inheritedEnv, LaunchPrecheckError, resolveWorkdir, taskEnv, validateEnvs, workspaceOf, WRAPPER } from '../wrapper';

/**
 * Starting a Slurm attempt: the attempt folder (batch.sh, the shared wrapper, the env file, the
 * scripts), then `sbatch`, then the handle copy in the folder. The task's envs travel in the env
 * file, never through sbatch's own environment, so a task's SBATCH_* cannot change the
 * submission; `--no-requeue` leaves every rerun to jobdeck's own recovery
 * (docs/slurm.md, "How an attempt runs").
 */

/** Name of the env file in the attempt folder (NUL-separated `NAME=value` records, mode 0600). */
export const ENV_FILE = 'env';

// The batch script. Static text: inputs arrive as arguments (paths) and the env file; never
// interpolated. `bash -p` (privileged mode) so BASH_ENV, exported functions and SHELLOPTS of the
// base environment do not affect it. The env file's records are only collected here (never
// assigned in this shell, so a task's IFS, PATH, BASH or __jobdeck_* cannot change this script)
// and handed to the wrapper through env(1); the wrapper runs with `bash -p` as locally, so the
// task's envs reach setup and run but not the wrapper's own parsing. mv and sync are looked up
// on the node itself. (No dollar-brace in this text: it is a template literal.)
// A job group's task (lib/executors/slurm/group.ts) also gets the group's hosts file — only its
// JOBDECK_TASK_<NAME>_HOST records are taken, over the env file's — and, for an attempt of its
// own, the env name its own host goes by.
//   $1 attempt dir  $2 log file  $3 workdir  $4 has setup  $5 has run  [$6 hosts file  $7 own host env]
const BATCH = String.raw`#!/bin/bash -p
# jobdeck Slurm batch script (generated; do not edit)
__jobdeck_dir=$1 __jobdeck_log=$2 __jobdeck_workdir=$3 __jobdeck_setup=$4 __jobdeck_run=$5 __jobdeck_hosts=$6 __jobdeck_self=$7
if [ ! -r "$__jobdeck_dir/env" ]; then
  echo "jobdeck: cannot read $__jobdeck_dir/env on $(hostname 2>/dev/null) (is the attempt folder on a shared file system?)" >&2
  exit 1
fi
set --
while IFS= read -r -d '' __jobdeck_kv; do set -- "$@" "$__jobdeck_kv"; done <"$__jobdeck_dir/env"
if [ -n "$__jobdeck_hosts" ] && [ -r "$__jobdeck_hosts" ]; then
  while IFS= read -r -d '' __jobdeck_kv; do
    [[ $__jobdeck_kv =~ ^JOBDECK_TASK_[A-Z0-9_]+_HOST=[^[:space:]]*$ ]] && set -- "$@" "$__jobdeck_kv"
  done <"$__jobdeck_hosts"
fi
__jobdeck_mv=/bin/mv; [ -x "$__jobdeck_mv" ] || __jobdeck_mv=/usr/bin/mv
__jobdeck_sync=/bin/sync; [ -x "$__jobdeck_sync" ] || __jobdeck_sync=/usr/bin/sync; [ -x "$__jobdeck_sync" ] || __jobdeck_sync=
__jobdeck_env=/usr/bin/env; [ -x "$__jobdeck_env" ] || __jobdeck_env=/bin/env
# This node's address (as the gang's batch script finds its nodes'): Slurm's NodeAddr, else what
# the name resolves to — SKYPILOT_NODE_IPS of a one-node attempt.
__jobdeck_node=$SLURMD_NODENAME; [ -n "$__jobdeck_node" ] || __jobdeck_node=$(hostname 2>/dev/null)
# The node's name, for the attempt's record of where it ran (Attempt.nodes).
printf '%s\n' "$__jobdeck_node" >"$__jobdeck_dir/hosts.tmp" && "$__jobdeck_mv" -f -- "$__jobdeck_dir/hosts.tmp" "$__jobdeck_dir/hosts"
__jobdeck_addr=$(scontrol -o show node "$__jobdeck_node" 2>/dev/null | sed -n 's/.*[[:space:]]NodeAddr=\([^[:space:]]*\).*/\1/p')
if ! [[ $__jobdeck_addr =~ ^[0-9.]+$|: ]]; then
  __jobdeck_addr=$(getent ahosts "$__jobdeck_node" 2>/dev/null | awk 'NR == 1 { print $1 }')
  [ -n "$__jobdeck_addr" ] || __jobdeck_addr=$__jobdeck_node
fi
[[ $__jobdeck_self =~ ^JOBDECK_TASK_[A-Z0-9_]+_HOST$ ]] && set -- "$@" "$__jobdeck_self=$__jobdeck_addr"
exec "$__jobdeck_env" -- "$@" "JOBDECK_NODE_IPS=$__jobdeck_addr" "SKYPILOT_NODE_IPS=$__jobdeck_addr" "SKYPILOT_SETUP_NODE_IPS=$__jobdeck_addr" \
  "$BASH" -p -- "$__jobdeck_dir/wrapper.sh" "$__jobdeck_dir" "$__jobdeck_log" "$__jobdeck_workdir" "$__jobdeck_mv" "$__jobdeck_sync" "$__jobdeck_setup" "$__jobdeck_run"
`;

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

/**
 * SkyPilot's GPU type → Slurm's GRES type: JOBDECK_SLURM_GPU_TYPES (`A100=a100,H100=h100_80gb`,
 * names matched ignoring case) when it names the type, else the type in lower case.
 * @throws TypeError for a malformed JOBDECK_SLURM_GPU_TYPES entry.
 */
export function slurmGpuType(type: string, env: Record<string, string | undefined> = process.env): string {
  for (const item of (setting('JOBDECK_SLURM_GPU_TYPES', env) ?? '').split(',')) {
    if (item.trim() === '') continue;
    const m = /^\s*([A-Za-z0-9_.-]+)\s*=\s*([A-Za-z0-9_.-]+)\s*$/.exec(item);
    if (!m) throw new TypeError(`JOBDECK_SLURM_GPU_TYPES: expected TYPE=GRES_TYPE entries separated by commas, got ${JSON.stringify(item)}`);
    if (m[1].toLowerCase() === type.toLowerCase()) return m[2];
  }
  return type.toLowerCase();
}

/**
 * sbatch's memory and time requests (docs/spec.md "resources", "max_duration"): `--mem` per node
 * in MiB, rounded up, from `resources.memory` (Slurm's cgroups hold the job to it where the cluster
 * constrains memory; its end is then OUT_OF_MEMORY); `--time` in whole minutes, rounded up,
 * from `max_duration` (Slurm stops the job and ends it TIMEOUT). Nothing for what the task does not give.
 */
export function limitArgs(req: Pick<LaunchRequest, 'memoryBytes' | 'maxDurationMs'>): string[] {
  const out: string[] = [];
  if (req.memoryBytes !== undefined) out.push(`--mem=${Math.max(1, Math.ceil(req.memoryBytes / (1024 * 1024)))}M`);
  if (req.maxDurationMs !== undefined) out.push(`--time=${Math.max(1, Math.ceil(req.maxDurationMs / 60_000))}`);
  return out;
}

/** sbatch refusals that say the task's own request can never run on the cluster (a precheck failure, not a lost attempt). */
const REQUEST_REFUSED = /Requested node configuration is not available|Memory specification can not be satisfied|Requested time limit is invalid|Requested partition configuration not available/i;

/** sbatch's GRES request for a task's GPUs (per node): `--gres=gpu:<type>:<count>`, or nothing. */
export function gresArgs(gpus: LaunchRequest['gpus'], env: Record<string, string | undefined> = process.env): string[] {
  return gpus && gpus.count > 0 ? [`--gres=gpu:${slurmGpuType(gpus.type, env)}:${gpus.count}`] : [];
}

/**
 * The attempt folder of a Slurm attempt, written as root or as jobdeck: the scripts, the env
 * file, the logs (made here: Slurm does not create folders). With an OS account
 * (docs/design.md §16), the batch job is the account's from its first line, so what it runs and
 * writes — scripts, env file, records, `nodes` — is in `job/`, handed over to it, and the logs
 * are made here and handed over (Slurm opens them as the account); the attempt folder around them
 * stays jobdeck's (0711), so no name in it can be replaced by the job.
 * @returns the folder the batch script runs in and writes its records to.
 */
async function prepareSlurmFolder(req: LaunchRequest, attemptDir: string, logPath: string, nodes: number): Promise<string> {
  const account = req.account;
  mkdirSync(attemptDir, { recursive: true, mode: 0o700 }); // scripts and env may hold secrets
  const dir = account ? path.join(attemptDir, JOB_DIR) : attemptDir;
  for (const f of [EXIT_FILE, 'exit.tmp', HANDLE_FILE, HOSTS_FILE, GROUP_MARK, 'setup.sh', 'run.sh', ENV_FILE, ...gangLeftovers(nodes)]) rmSync(path.join(attemptDir, f), { force: true });
  if (account) {
    await passable(attemptDir);
    await freshOwnFolder(dir);
  }
  const logs = Array.from({ length: nodes }, (_, k) => rankLogPath(logPath, k));
  mkdirSync(path.dirname(logPath), { recursive: true });
  for (const l of logs) {
    const fd = openSync(l, 'a', 0o600); // surfaces a bad log path as a launch error
    try {
      if (account) fchownSync(fd, account.uid, account.gid);
    } finally {
      closeSync(fd);
    }
  }
  writeFileSync(path.join(dir, 'wrapper.sh'), WRAPPER);
  writeFileSync(path.join(dir, BATCH_FILE), nodes > 1 ? GANG_BATCH : BATCH, { mode: 0o700 });
  if (req.setup !== null) writeFileSync(path.join(dir, 'setup.sh'), req.setup);
  if (req.run !== null) writeFileSync(path.join(dir, 'run.sh'), req.run);
  // The task's envs, jobdeck's variables and the attempt's token; the base environment is sbatch's own.
  writeFileSync(path.join(dir, ENV_FILE), envFileText({ ...taskEnv(req, 'slurm'), ...apiEnv(req) }), { mode: 0o600 });
  if (nodes > 1) {
    writeFileSync(path.join(dir, LOGS_FILE), logs.map((l) => `${l}\0`).join(''));
    writeFileSync(path.join(dir, RANK_FILE), RANK_SCRIPT, { mode: 0o700 });
  }
  const work = workspaceOf(attemptDir);
  if (account) {
    await freshOwnFolder(work);
    await handOver(work, account.uid, account.gid);
    await handOver(dir, account.uid, account.gid);
  } else mkdirSync(work, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * Submits one attempt with sbatch (the flags are in the Slurm executor's module doc), on
 * `partition` when given; an attempt of `req.nodes` > 1 as one gang (lib/executors/slurm/gang.ts).
 * With an OS account, sbatch runs as the account (setpriv: its uid, gid and groups), so Slurm
 * runs the job as it and `squeue` names it, with the account's clean environment
 * (wrapper.ts accountEnv) as the job's base — nothing of the server's.
 * @returns its handle (`ref` = the Slurm job id), also written to `<attemptDir>/handle.json`.
 * @throws TypeError for bad envs, a relative workdir, cpus ≤ 0 or a node count that is not an
 *   integer ≥ 1; SlurmUnavailableError when the controller does not answer; Error when sbatch
 *   refuses the job.
 */
export async function launchSlurm(req: LaunchRequest, partition: string | undefined): Promise<AttemptHandle> {
  validateEnvs(req.envs);
  // The spec refuses image_id docker:… on Slurm at submit (lib/jobs/executor-kinds.ts `containers`); a job stored otherwise still stops here.
  if (req.container) throw new LaunchPrecheckError(`Slurm executor: image_id "docker:${req.container.image}" cannot run: no container runtime on the nodes is configured for jobdeck`);
  const attemptDir = path.resolve(req.attemptDir);
  const logPath = path.resolve(req.logPath);
  const workdir = resolveWorkdir(req.workdir, attemptDir, req.account?.home);
  const nodes = req.nodes ?? 1;
  if (!(req.cpus > 0) || !Number.isFinite(req.cpus)) throw new TypeError(`cpus must be a number > 0, got ${req.cpus}`);
  if (!Number.isInteger(nodes) || nodes < 1) throw new TypeError(`nodes must be an integer ≥ 1, got ${req.nodes}`);
  await ensureController();
  const dir = await prepareSlurmFolder(req, attemptDir, logPath, nodes);
  const batchPath = path.join(dir, BATCH_FILE);

  const output = slurmOutputPattern(logPath) ?? '/dev/null';
  const cpus = String(Math.ceil(req.cpus));
  const has = (script: string | null) => (script !== null ? '1' : '0');
  // A job group's first attempts start together, as one heterogeneous job (lib/executors/slurm/group.ts).
  if (req.group && nodes === 1 && req.attempt === 1) {
    const join = { recordDir: dir, logPath, output, workdir, hasSetup: has(req.setup), hasRun: has(req.run), cpus, stepName: slurmJobName(req) };
    const joined = await joinGroup(req, partition, attemptDir, join);
    if (joined) return keepHandle(joined);
  }
  const args = [
    '--parsable',
    `--job-name=${slurmJobName(req)}`,
    `--output=${output}`,
    '--open-mode=append',
    `--chdir=${dir}`,
    `--nodes=${nodes}`,
    `--ntasks=${nodes}`,
    ...(nodes > 1 ? ['--ntasks-per-node=1'] : []),
    `--cpus-per-task=${cpus}`,
    ...gresArgs(req.gpus),
    ...limitArgs(req),
    '--no-requeue',
    '--export=ALL',
    ...(partition ? [`--partition=${partition}`] : []),
    batchPath,
    // The gang's batch script reads the log paths from its `logs` file (one per rank).
    ...(nodes > 1 ? [dir, workdir, has(req.setup), has(req.run), String(nodes), cpus] : [dir, logPath, workdir, has(req.setup), has(req.run), ...groupHostArgs(req)]),
  ];
  const env = req.account ? accountEnv(req.account) : inheritedEnv();
  const r = await runSlurm('sbatch', args, { timeoutMs: 60_000, env: env as NodeJS.ProcessEnv, cwd: dir, ...(req.account ? { as: req.account } : {}) });
  const id = /^(\d+)(?:;\S*)?$/.exec(r.stdout.trim())?.[1];
  if (r.code !== 0 || !id) {
    const msg = firstLine(r.stderr) || firstLine(r.stdout) || `exit code ${r.code}`;
    if (REQUEST_REFUSED.test(msg)) throw new LaunchPrecheckError(`Slurm executor: sbatch refused the attempt's request (${limitArgs(req).concat(gresArgs(req.gpus)).join(' ') || 'cpus and nodes'}): ${msg}`);
    throw new Error(`Slurm executor: sbatch refused the attempt: ${msg}`);
  }
  return keepHandle({ executor: 'slurm', ref: id, pid: null, pidStartTime: null, attemptDir });
}

/** Writes the handle copy into the attempt folder (readSlurmHandleFile) and returns the handle. */
function keepHandle(handle: AttemptHandle): AttemptHandle {
  const tmp = path.join(handle.attemptDir, `${HANDLE_FILE}.tmp`);
  writeFileSync(tmp, JSON.stringify(handle) + '\n');
  renameSync(tmp, path.join(handle.attemptDir, HANDLE_FILE));
  return handle;
}
