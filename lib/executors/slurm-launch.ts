import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rankLogPath } from '../jobs/paths';
import { EXIT_FILE, HANDLE_FILE } from './attempt-record';
import { BATCH_FILE, ensureController, firstLine, runSlurm } from './slurm-cli';
import { GANG_BATCH, gangLeftovers, LOGS_FILE, RANK_FILE, RANK_SCRIPT } from './slurm-gang';
import type { AttemptHandle, LaunchRequest } from './types';
import { inheritedEnv, resolveWorkdir, taskEnv, validateEnvs, WRAPPER } from './wrapper';

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
# This node's address (as the gang's batch script finds its nodes'): Slurm's NodeAddr, else what
# the name resolves to — SKYPILOT_NODE_IPS of a one-node attempt.
__jobdeck_node=$SLURMD_NODENAME; [ -n "$__jobdeck_node" ] || __jobdeck_node=$(hostname 2>/dev/null)
__jobdeck_addr=$(scontrol -o show node "$__jobdeck_node" 2>/dev/null | sed -n 's/.*[[:space:]]NodeAddr=\([^[:space:]]*\).*/\1/p')
if ! [[ $__jobdeck_addr =~ ^[0-9.]+$|: ]]; then
  __jobdeck_addr=$(getent ahosts "$__jobdeck_node" 2>/dev/null | awk 'NR == 1 { print $1 }')
  [ -n "$__jobdeck_addr" ] || __jobdeck_addr=$__jobdeck_node
fi
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
 * Submits one attempt with sbatch (the flags are in the Slurm executor's module doc), on
 * `partition` when given; an attempt of `req.nodes` > 1 as one gang (lib/executors/slurm-gang.ts).
 * @returns its handle (`ref` = the Slurm job id), also written to `<attemptDir>/handle.json`.
 * @throws TypeError for bad envs, a relative workdir, cpus ≤ 0 or a node count that is not an
 *   integer ≥ 1; SlurmUnavailableError when the controller does not answer; Error when sbatch
 *   refuses the job.
 */
/**
 * SkyPilot's GPU type → Slurm's GRES type: JOBDECK_SLURM_GPU_TYPES (`A100=a100,H100=h100_80gb`,
 * names matched ignoring case) when it names the type, else the type in lower case.
 * @throws TypeError for a malformed JOBDECK_SLURM_GPU_TYPES entry.
 */
export function slurmGpuType(type: string, env: Record<string, string | undefined> = process.env): string {
  for (const item of (env.JOBDECK_SLURM_GPU_TYPES ?? '').split(',')) {
    if (item.trim() === '') continue;
    const m = /^\s*([A-Za-z0-9_.-]+)\s*=\s*([A-Za-z0-9_.-]+)\s*$/.exec(item);
    if (!m) throw new TypeError(`JOBDECK_SLURM_GPU_TYPES: expected TYPE=GRES_TYPE entries separated by commas, got ${JSON.stringify(item)}`);
    if (m[1].toLowerCase() === type.toLowerCase()) return m[2];
  }
  return type.toLowerCase();
}

/** sbatch's GRES request for a task's GPUs (per node): `--gres=gpu:<type>:<count>`, or nothing. */
export function gresArgs(gpus: LaunchRequest['gpus'], env: Record<string, string | undefined> = process.env): string[] {
  return gpus && gpus.count > 0 ? [`--gres=gpu:${slurmGpuType(gpus.type, env)}:${gpus.count}`] : [];
}

export async function launchSlurm(req: LaunchRequest, partition: string | undefined): Promise<AttemptHandle> {
  validateEnvs(req.envs);
  const attemptDir = path.resolve(req.attemptDir);
  const logPath = path.resolve(req.logPath);
  const workdir = resolveWorkdir(req.workdir, attemptDir);
  const nodes = req.nodes ?? 1;
  if (!(req.cpus > 0) || !Number.isFinite(req.cpus)) throw new TypeError(`cpus must be a number > 0, got ${req.cpus}`);
  if (!Number.isInteger(nodes) || nodes < 1) throw new TypeError(`nodes must be an integer ≥ 1, got ${req.nodes}`);
  await ensureController();

  mkdirSync(attemptDir, { recursive: true, mode: 0o700 }); // scripts and env may hold secrets
  for (const f of [EXIT_FILE, 'exit.tmp', HANDLE_FILE, 'setup.sh', 'run.sh', ENV_FILE, ...gangLeftovers(nodes)]) rmSync(path.join(attemptDir, f), { force: true });
  const logs = Array.from({ length: nodes }, (_, k) => rankLogPath(logPath, k));
  mkdirSync(path.dirname(logPath), { recursive: true });
  for (const l of logs) closeSync(openSync(l, 'a')); // surfaces a bad log path as a launch error
  writeFileSync(path.join(attemptDir, 'wrapper.sh'), WRAPPER);
  const batchPath = path.join(attemptDir, BATCH_FILE);
  writeFileSync(batchPath, nodes > 1 ? GANG_BATCH : BATCH, { mode: 0o700 });
  if (req.setup !== null) writeFileSync(path.join(attemptDir, 'setup.sh'), req.setup);
  if (req.run !== null) writeFileSync(path.join(attemptDir, 'run.sh'), req.run);
  writeFileSync(
    path.join(attemptDir, ENV_FILE),
    Object.entries(taskEnv(req, 'slurm'))
      .map(([k, v]) => `${k}=${v}\0`)
      .join(''),
    { mode: 0o600 },
  );
  if (nodes > 1) {
    writeFileSync(path.join(attemptDir, LOGS_FILE), logs.map((l) => `${l}\0`).join(''));
    writeFileSync(path.join(attemptDir, RANK_FILE), RANK_SCRIPT, { mode: 0o700 });
  }

  const output = slurmOutputPattern(logPath) ?? '/dev/null';
  const cpus = String(Math.ceil(req.cpus));
  const has = (script: string | null) => (script !== null ? '1' : '0');
  const args = [
    '--parsable',
    `--job-name=${slurmJobName(req)}`,
    `--output=${output}`,
    '--open-mode=append',
    `--chdir=${attemptDir}`,
    `--nodes=${nodes}`,
    `--ntasks=${nodes}`,
    ...(nodes > 1 ? ['--ntasks-per-node=1'] : []),
    `--cpus-per-task=${cpus}`,
    ...gresArgs(req.gpus),
    '--no-requeue',
    '--export=ALL',
    ...(partition ? [`--partition=${partition}`] : []),
    batchPath,
    // The gang's batch script reads the log paths from its `logs` file (one per rank).
    ...(nodes > 1 ? [attemptDir, workdir, has(req.setup), has(req.run), String(nodes), cpus] : [attemptDir, logPath, workdir, has(req.setup), has(req.run)]),
  ];
  const r = await runSlurm('sbatch', args, { timeoutMs: 60_000, env: inheritedEnv() as NodeJS.ProcessEnv, cwd: attemptDir });
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
