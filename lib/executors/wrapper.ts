import os from 'node:os';
import path from 'node:path';
import type { LaunchRequest } from './types';

/**
 * The attempt wrapper and its inputs, shared by the local and the Slurm executor so an attempt
 * means the same on both: the wrapper's static text, the environment an attempt gets (the
 * server's own minus jobdeck's configuration, plus the task's envs, plus JOBDECK_JOB_ID /
 * JOBDECK_TASK_INDEX / JOBDECK_ATTEMPT), and the checks of a LaunchRequest's envs and workdir
 * (docs/design.md, "Executors").
 */

/**
 * Variables of the server's own environment NOT passed to attempts: jobdeck's configuration and
 * secrets (JOBDECK_TOKEN, DATABASE_URL…). Everything else (PATH, HOME, LANG…) is inherited, then
 * the task's envs, then JOBDECK_JOB_ID / JOBDECK_TASK_INDEX / JOBDECK_ATTEMPT.
 */
export function isServerOnlyEnv(name: string): boolean {
  return name.startsWith('JOBDECK_') || name === 'DATABASE_URL';
}

/** The server's environment an attempt inherits: everything but what isServerOnlyEnv names. */
export function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !isServerOnlyEnv(k)) env[k] = v;
  return env;
}

/**
 * SkyPilot's task id for an attempt's task: the same for every attempt of the task (SkyPilot
 * keeps a managed job's task id across recoveries, so a task may key its checkpoints on it).
 */
export function skypilotTaskId(req: Pick<LaunchRequest, 'jobId' | 'taskIndex'>): string {
  return `jobdeck-job-${req.jobId}-task-${req.taskIndex}`;
}

/**
 * The task's envs plus jobdeck's variables, which win (docs/spec.md "What each attempt gets"):
 * JOBDECK_JOB_ID / JOBDECK_TASK_INDEX / JOBDECK_ATTEMPT, and SkyPilot's native task variables
 * with SkyPilot's meanings — SKYPILOT_TASK_ID, SKYPILOT_NUM_GPUS_PER_NODE (GPUs granted per
 * node: `gpus.count`, else 0; locally CUDA_VISIBLE_DEVICES too), SKYPILOT_CLUSTER_INFO (JSON: cluster_name, cloud = the
 * executor, region and zone null). A one-node attempt also gets its rank variables here (rank 0
 * of 1; SKYPILOT_NODE_IPS / JOBDECK_NODE_IPS is `nodeIp` when given — locally 127.0.0.1; the
 * Slurm batch script adds the node's address); a gang's ranks get theirs from the rank script
 * (lib/executors/slurm-gang.ts), so they are left out for nodes > 1.
 */
export function taskEnv(req: Pick<LaunchRequest, 'envs' | 'jobId' | 'taskIndex' | 'attempt' | 'nodes' | 'gpus'>, executor: string, nodeIp?: string): Record<string, string> {
  const oneNode = (req.nodes ?? 1) <= 1;
  const gpus = req.gpus?.count ?? 0;
  return {
    ...req.envs,
    JOBDECK_JOB_ID: String(req.jobId),
    JOBDECK_TASK_INDEX: String(req.taskIndex),
    JOBDECK_ATTEMPT: String(req.attempt),
    SKYPILOT_TASK_ID: skypilotTaskId(req),
    SKYPILOT_NUM_GPUS_PER_NODE: String(gpus),
    // Slurm sets CUDA_VISIBLE_DEVICES to the GPUs it granted; locally the first `gpus` devices.
    ...(executor === 'local' && gpus > 0 ? { CUDA_VISIBLE_DEVICES: Array.from({ length: gpus }, (_, i) => i).join(',') } : {}),
    SKYPILOT_CLUSTER_INFO: JSON.stringify({ cluster_name: `jobdeck-job-${req.jobId}`, cloud: executor, region: null, zone: null }),
    ...(oneNode
      ? {
          JOBDECK_NODE_RANK: '0',
          JOBDECK_NUM_NODES: '1',
          SKYPILOT_NODE_RANK: '0',
          SKYPILOT_NUM_NODES: '1',
          SKYPILOT_SETUP_NODE_RANK: '0',
          ...(nodeIp !== undefined ? { JOBDECK_NODE_IPS: nodeIp, SKYPILOT_NODE_IPS: nodeIp, SKYPILOT_SETUP_NODE_IPS: nodeIp } : {}),
        }
      : {}),
  };
}

/** The address a local attempt's node has in SKYPILOT_NODE_IPS: this machine, as it reaches itself. */
export const LOCAL_NODE_IP = '127.0.0.1';

// The wrapper. Static text: the attempt's inputs arrive as positional arguments (paths) and as the
// environment (the task's envs), never by interpolation into the script.
//   $1 attempt dir  $2 log file  $3 workdir  $4 mv  $5 sync ('' = none)  $6 has setup  $7 has run
//   $8 (optional) the exit record's name, default "exit": one rank of a multi-node attempt writes
//      its own (lib/executors/slurm-gang.ts), with "stopped":true when a signal (TERM/INT/HUP)
//      reached the wrapper — a rank stopped from outside, not failing on its own.
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
__jobdeck_exit=exit; [ -n "$8" ] && __jobdeck_exit=$8
__jobdeck_term=0
trap '__jobdeck_term=1' TERM INT HUP
__jobdeck_finish() { # phase exit-code [reason]
  local s us ms
  # EPOCHREALTIME (bash 5): seconds, the locale's decimal point, microseconds.
  IFS=., read -r s us <<<"$EPOCHREALTIME"
  if [ -n "$us" ]; then ms=$(( s * 1000 + 10#$us / 1000 )); else ms=$(date +%s%3N 2>/dev/null) || ms=0; fi
  local r=''
  [ -n "$3" ] && r=",\"reason\":\"$3\""
  [ "$__jobdeck_exit" != exit ] && [ "$__jobdeck_term" = 1 ] && r="$r,\"stopped\":true"
  printf '{"phase":"%s","exitCode":%d,"endedAtMs":%s%s}\n' "$1" "$2" "$ms" "$r" >"$__jobdeck_dir/$__jobdeck_exit.tmp"
  # The attempt's output ends here: once the exit record is visible the monitor stops whatever is
  # left of the group, and bash must not report that (e.g. "Terminated" for the sync) in the log.
  exec >/dev/null 2>&1
  "$__jobdeck_mv" -f -- "$__jobdeck_dir/$__jobdeck_exit.tmp" "$__jobdeck_dir/$__jobdeck_exit"
  # One sync for the record and its name, before the wrapper exits (the exit is what the monitor
  # hears first). A power loss between the rename and this sync can leave a torn record, which is
  # read as malformed: the attempt is lost, as with no record at all.
  [ -n "$__jobdeck_sync" ] && "$__jobdeck_sync" -- "$__jobdeck_dir/$__jobdeck_exit" "$__jobdeck_dir"
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

/**
 * A launch request the task's own spec makes impossible (a relative workdir, an env name with
 * `=`): not a lost attempt and not the backend's fault. `precheck: true` tells the monitor to
 * end the task FAILED_PRECHECKS with this message instead of recovering it
 * (docs/design.md §7, like `transient: true`).
 */
export class LaunchPrecheckError extends TypeError {
  readonly precheck = true;
  constructor(message: string) {
    super(message);
    this.name = 'LaunchPrecheckError';
  }
}

/**
 * Resolves a task's workdir: null → the attempt folder; `~` / `~/x` → the server user's home.
 * @throws LaunchPrecheckError for a relative path (the spec refuses those at submit; a job
 *   stored before that rule, or written by hand, still gets here).
 */
export function resolveWorkdir(workdir: string | null, attemptDir: string): string {
  if (workdir === null || workdir === '') return attemptDir;
  let dir = workdir;
  if (dir === '~') dir = os.homedir();
  else if (dir.startsWith('~/')) dir = path.join(os.homedir(), dir.slice(2));
  if (!path.isAbsolute(dir)) {
    throw new LaunchPrecheckError(`workdir must be an absolute path or start with ~/, got ${JSON.stringify(workdir)}`);
  }
  return dir;
}

/**
 * Checks a LaunchRequest's envs (shared with the Slurm executor).
 * @throws LaunchPrecheckError for an empty name, a name with "=" or NUL, a non-string value or a value with NUL.
 */
export function validateEnvs(envs: Record<string, string>): void {
  for (const [key, value] of Object.entries(envs)) {
    if (key === '' || key.includes('=') || key.includes('\0')) {
      throw new LaunchPrecheckError(`envs: invalid variable name ${JSON.stringify(key)} (must be non-empty, without "=" or NUL)`);
    }
    if (typeof value !== 'string') throw new LaunchPrecheckError(`envs.${key}: expected a string, got ${typeof value}`);
    if (value.includes('\0')) throw new LaunchPrecheckError(`envs.${key}: a value cannot contain a NUL byte`);
  }
}
