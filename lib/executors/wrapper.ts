import os from 'node:os';
import path from 'node:path';
import { capabilitiesOf } from '../jobs/executor-kinds';
import { workspaceOf } from '../jobs/paths';
import { PUMP_DRAIN, PUMP_START } from './log-pump';

export { workspaceOf } from '../jobs/paths';
import type { OsAccount } from '../accounts';
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
 * SKYPILOT_TASK_IDS: the ids of every task of the job, newline-separated, in pipeline order —
 * SkyPilot's format (its managed-job controller joins the DAG's task ids with "\n", task 0 first),
 * the same for every task and attempt of the job.
 */
export function skypilotTaskIds(req: Pick<LaunchRequest, 'jobId' | 'taskIndex' | 'taskCount'>): string {
  // A request without its job's task count still names its own task and those before it.
  const n = Math.max(1, req.taskCount ?? 1, req.taskIndex + 1);
  return Array.from({ length: n }, (_, i) => skypilotTaskId({ jobId: req.jobId, taskIndex: i })).join('\n');
}

/**
 * The task's envs plus jobdeck's variables, which win (docs/spec.md "What each attempt gets"):
 * JOBDECK_JOB_ID / JOBDECK_TASK_INDEX / JOBDECK_ATTEMPT, and SkyPilot's native task variables
 * with SkyPilot's meanings — SKYPILOT_TASK_ID, SKYPILOT_TASK_IDS, SKYPILOT_NUM_GPUS_PER_NODE (GPUs granted per
 * node: `gpus.count`, a share counting as 1, else 0; locally CUDA_VISIBLE_DEVICES too: the granted
 * devices' indices), SKYPILOT_CLUSTER_INFO (JSON: cluster_name, cloud = the
 * executor, region and zone null). A one-node attempt also gets its rank variables here (rank 0
 * of 1; SKYPILOT_NODE_IPS / JOBDECK_NODE_IPS is `nodeIp` when given — locally 127.0.0.1; the
 * Slurm batch script adds the node's address); a gang's ranks get theirs from the rank script
 * (lib/executors/slurm/gang.ts), so they are left out for nodes > 1.
 */
export function taskEnv(req: Pick<LaunchRequest, 'envs' | 'jobId' | 'taskIndex' | 'taskCount' | 'attempt' | 'nodes' | 'gpus'>, executor: string, nodeIp?: string): Record<string, string> {
  const oneNode = (req.nodes ?? 1) <= 1;
  const gpus = req.gpus?.count ?? 0;
  // SkyPilot's variable is a whole count: a share of one GPU is 1 GPU to the task.
  const perNode = gpus > 0 && gpus < 1 ? 1 : gpus;
  return {
    ...req.envs,
    JOBDECK_JOB_ID: String(req.jobId),
    JOBDECK_TASK_INDEX: String(req.taskIndex),
    JOBDECK_ATTEMPT: String(req.attempt),
    SKYPILOT_TASK_ID: skypilotTaskId(req),
    SKYPILOT_TASK_IDS: skypilotTaskIds(req),
    SKYPILOT_NUM_GPUS_PER_NODE: String(perNode),
    // A scheduler (Slurm) sets CUDA_VISIBLE_DEVICES to the GPUs it granted; on the host's own GPUs
    // (lib/jobs/executor-kinds.ts `gpus: 'host'`) the devices admission granted (a job admitted
    // before grants were recorded: the first `gpus`, as then).
    ...(capabilitiesOf(executor)?.gpus === 'host' && gpus > 0 ? { CUDA_VISIBLE_DEVICES: (req.gpus?.devices?.map((d) => d.index) ?? Array.from({ length: perNode }, (_, i) => i)).join(',') } : {}),
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
//      its own (lib/executors/slurm/gang.ts), with "stopped":true when a signal (TERM/INT/HUP)
//      reached the wrapper — a rank stopped from outside, not failing on its own.
//   $9 (optional) the enter program (local: <attempt dir>/enter.sh, lib/executors/local/enter.ts):
//      setup and run start through it, read with `.` in a subshell of the wrapper — it joins the
//      attempt's control groups (the wrapper itself stays outside them) and is the one place that
//      will drop to the job's account.
//      Empty: setup and run start directly (Slurm, whose own cgroups hold the job).
// The environment may hold __jobdeck_syncer: the pid of the wrapper's parent when that parent
// publishes the exit record itself after reaping the wrapper — renames a whole `exit.tmp` and makes
// it durable (the local launcher, lib/executors/local/launcher-main.mjs); the wrapper then starts
// neither `mv` nor `sync` while that process is still its parent (docs/design.md §6). It is
// removed from the environment setup and run get.
// When the attempt folder records its memory group's OOM count file (`cgroup.oom`), the exit
// record carries the group's OOM kills ("oomKills":N), read by the wrapper once the phase ended:
// the job cannot forge it, and the monitor needs no guess from exit code 137.
// It is started as `bash -p` so that BASH_ENV, exported functions, SHELLOPTS/BASHOPTS, CDPATH and
// GLOBIGNORE from the task's envs do not affect the wrapper itself; `set +p` then restores the
// normal behaviour for setup and run, which get those variables as usual (only a task's own
// SHELLOPTS/BASHOPTS are not passed on). External commands are called by absolute path because
// the task's envs may change PATH. Names starting with __jobdeck_ are reserved. (No dollar-brace
// in this text but the log pump's two blocks: it is a template literal.)
/** The attempt wrapper (bash; arguments above). Exported for the Slurm executor, which runs the same text. */
export const WRAPPER = String.raw`# jobdeck attempt wrapper (generated; do not edit)
set +p
__jobdeck_dir=$1 __jobdeck_log=$2 __jobdeck_workdir=$3 __jobdeck_mv=$4 __jobdeck_sync=$5
__jobdeck_exit=exit; [ -n "$8" ] && __jobdeck_exit=$8
__jobdeck_enter=$9
__jobdeck_syncpid=$__jobdeck_syncer; unset __jobdeck_syncer
__jobdeck_term=0
trap '__jobdeck_term=1' TERM INT HUP
${PUMP_DRAIN}
__jobdeck_finish() { # phase exit-code [reason]
  local s us ms cm cs cf sm ss sf
  # EPOCHREALTIME (bash 5): seconds, the locale's decimal point, microseconds.
  IFS=., read -r s us <<<"$EPOCHREALTIME"
  if [ -n "$us" ]; then ms=$(( s * 1000 + 10#$us / 1000 )); else ms=$(date +%s%3N 2>/dev/null) || ms=0; fi
  local r='' f='' k v n=0
  [ -n "$3" ] && r=",\"reason\":\"$3\""
  [ "$__jobdeck_exit" != exit ] && [ "$__jobdeck_term" = 1 ] && r="$r,\"stopped\":true"
  # The CPU time of what the wrapper waited for — setup, run and what they waited for — from the
  # kernel's record of its children (bash's times builtin: second line "XmY.ZZZs XmY.ZZZs", user
  # and system; written to the record's temp name first: a command substitution would fork and
  # read the fork's own). The final reading of a task shorter than the sampling interval.
  if times >"$__jobdeck_dir/$__jobdeck_exit.tmp" 2>/dev/null && { read -r _; IFS=' ms.,' read -r cm cs cf sm ss sf _; } <"$__jobdeck_dir/$__jobdeck_exit.tmp" 2>/dev/null \
    && [[ "$cm$cs$cf$sm$ss$sf" =~ ^[0-9]+$ ]] && [ "$(( 10#$cf < 1000 && 10#$sf < 1000 ))" = 1 ]; then
    r="$r,\"cpuMs\":$(( (10#$cm * 60 + 10#$cs + 10#$sm * 60 + 10#$ss) * 1000 + 10#$cf + 10#$sf ))"
  fi
  if [ -f "$__jobdeck_dir/cgroup.oom" ]; then
    { IFS= read -r f <"$__jobdeck_dir/cgroup.oom" && while read -r k v; do [ "$k" = oom_kill ] && n=$v; done <"$f"; } 2>/dev/null
    case $n in '' | *[!0-9]*) n=0 ;; esac
    [ "$n" -gt 0 ] && r="$r,\"oomKills\":$n"
  fi
  # The log pump's last bytes are in the log before the record says the attempt ended (docs/design.md §8).
  __jobdeck_drain; [ "$__jobdeck_lostn" -gt 0 ] && r="$r,\"logLostBytes\":$__jobdeck_lostn"
  local written=0
  printf '{"phase":"%s","exitCode":%d,"endedAtMs":%s%s}\n' "$1" "$2" "$ms" "$r" >"$__jobdeck_dir/$__jobdeck_exit.tmp" && written=1
  # The attempt's output ends here: once the exit record is visible the monitor stops whatever is
  # left of the group, and bash must not report that (e.g. "Terminated" for the sync) in the log.
  exec >/dev/null 2>&1
  # A record the disk refused is not published: an empty exit file reads as malformed (the attempt
  # lost), while jobdeck, the wrapper's parent, saw the code and writes the record once there is
  # room (docs/design.md §7, "the disk is full").
  # A parent that publishes the record after reaping the wrapper (__jobdeck_syncer, still this
  # process's parent: it renames a whole record and syncs it with its folder) spares the two
  # process starts below — a job end's costliest steps but the task's own. The parent pid is
  # read now (bash's PPID is fixed at start): a parent that exited has handed the wrapper to
  # another, even while it stays a zombie nobody reaps, and a reused pid is not the parent. If it
  # dies after this look, the whole record under its temporary name is read as the record
  # (docs/design.md §6).
  local ppid=''
  [ -n "$__jobdeck_syncpid" ] && { read -r _ _ _ ppid _ </proc/$$/stat; } 2>/dev/null
  if [ "$written" = 1 ] && { [ -z "$ppid" ] || [ "$ppid" != "$__jobdeck_syncpid" ]; }; then
    "$__jobdeck_mv" -f -- "$__jobdeck_dir/$__jobdeck_exit.tmp" "$__jobdeck_dir/$__jobdeck_exit"
    # One sync for the record and its name. A power loss between the rename and the sync can
    # leave a torn record, which is read as malformed: the attempt is lost, as with no record at
    # all.
    if [ -n "$__jobdeck_sync" ]; then
      "$__jobdeck_sync" -- "$__jobdeck_dir/$__jobdeck_exit" "$__jobdeck_dir"
    fi
  fi
  exit "$2"
}
if ! exec >>"$__jobdeck_log" 2>&1; then
  __jobdeck_finish setup 1 'cannot open the log file'
fi
# Output reaches the log through the log pump (lib/executors/log-pump.ts, docs/design.md §8).
${PUMP_START}
if ! cd -P -- "$__jobdeck_workdir" 2>/dev/null; then
  printf 'jobdeck: workdir %s does not exist or is not an accessible directory; setup and run not started\n' "$__jobdeck_workdir"
  __jobdeck_finish setup 1 'workdir does not exist or is not an accessible directory'
fi
__jobdeck_phase() { # script: one phase, through the enter step when there is one
  # Read into a subshell of the wrapper, not started as a program: the fork joins the groups and
  # execs the phase, one bash start less a phase (docs/design.md §7 "The enter step").
  if [ -n "$__jobdeck_enter" ]; then ( . "$__jobdeck_enter" "$__jobdeck_dir" -- "$BASH" -- "$1" ); else "$BASH" -- "$1"; fi
}
if [ "$6" = 1 ]; then
  __jobdeck_phase "$__jobdeck_dir/setup.sh"
  __jobdeck_rc=$?
  [ "$__jobdeck_rc" -ne 0 ] && __jobdeck_finish setup "$__jobdeck_rc"
fi
[ "$__jobdeck_term" = 1 ] && __jobdeck_finish setup 143 'terminated before run started'
__jobdeck_rc=0
if [ "$7" = 1 ]; then
  __jobdeck_phase "$__jobdeck_dir/run.sh"
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
 * Resolves a task's workdir: null → the attempt's workspace (workspaceOf); `~` / `~/x` → `home`,
 * the home of the account the attempt runs as (default: the server user's).
 * @throws LaunchPrecheckError for a relative path (the spec refuses those at submit; a job
 *   stored before that rule, or written by hand, still gets here).
 */
export function resolveWorkdir(workdir: string | null, attemptDir: string, home: string = os.homedir()): string {
  if (workdir === null || workdir === '') return workspaceOf(attemptDir);
  let dir = workdir;
  if (dir === '~') dir = home;
  else if (dir.startsWith('~/')) dir = path.join(home, dir.slice(2));
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

/** PATH of an attempt that runs as its own account: the system's, nothing of jobdeck's (no node_modules/.bin). */
export const ACCOUNT_PATH = '/usr/local/bin:/usr/bin:/bin';
/** LANG of an attempt that runs as its own account. */
export const ACCOUNT_LANG = 'C.UTF-8';

/**
 * The base environment of an attempt that runs as `account` (docs/spec.md "What each attempt
 * gets"): HOME, USER, LOGNAME and SHELL from its passwd entry, a plain PATH and LANG — none of
 * the server's own variables (NODE_ENV, PORT, npm_*, DATABASE_URL…). The task's envs and
 * jobdeck's variables (taskEnv, apiEnv) go on top.
 */
export function accountEnv(account: OsAccount): Record<string, string> {
  return { HOME: account.home, USER: account.name, LOGNAME: account.name, SHELL: account.shell || '/bin/sh', PATH: ACCOUNT_PATH, LANG: ACCOUNT_LANG };
}

/** JOBDECK_URL and JOBDECK_TOKEN of an attempt that may call jobdeck back (its own token); {} without. */
export function apiEnv(req: Pick<LaunchRequest, 'api'>): Record<string, string> {
  return req.api ? { JOBDECK_URL: req.api.url, JOBDECK_TOKEN: req.api.token } : {};
}

/**
 * The whole environment of an attempt's setup and run: with an account, accountEnv — else the
 * server's own minus jobdeck's settings (inheritedEnv: single-user, as before) — then the
 * task's envs and jobdeck's variables (taskEnv), then JOBDECK_URL / JOBDECK_TOKEN (apiEnv), which
 * win.
 */
export function attemptEnv(req: LaunchRequest, executor: string, nodeIp?: string): Record<string, string> {
  return { ...(req.account ? accountEnv(req.account) : inheritedEnv()), ...taskEnv(req, executor, nodeIp), ...apiEnv(req) };
}

/** The env file's text: NUL-separated `NAME=value` records (the Slurm batch script and the local enter step read it). */
export function envFileText(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `${k}=${v}\0`)
    .join('');
}
