import { existsSync } from 'node:fs';
import path from 'node:path';
import { recordDirOf } from '../attempt-record';

/**
 * A multi-node attempt on Slurm (SkyPilot's `num_nodes`): one batch job of N nodes whose batch
 * script runs setup on every node (one `srun` step), then — only when every rank's setup
 * succeeded — run on every node (a second step), each rank through the shared wrapper with its
 * own log and its own exit record, and then decides the attempt's one exit record from the
 * ranks' (docs/slurm.md, "Multi-node tasks"):
 *
 * - every rank exited 0 → the attempt exited 0;
 * - a rank failed on its own → the first such failure (earliest end, then lowest rank) decides:
 *   its phase, its exit code, `"rank":K`; `srun --kill-on-bad-exit` has stopped the other ranks
 *   (they record `"stopped":true`, or nothing when killed);
 * - every failure was a stop from outside (a cancel) → the first one decides, likewise;
 * - a rank recorded nothing and no rank failed on its own (its node failed: NODE_FAIL, a dead
 *   slurmd), or Slurm signalled the batch script itself (job cancel, node failure) → no record:
 *   the attempt is lost, and jobdeck's recovery relaunches the whole gang.
 *
 * Rank K runs on the K-th node of the allocation (srun's block distribution, one task per node;
 * rank 0 is the batch host, the head) and gets JOBDECK_NODE_RANK, JOBDECK_NUM_NODES and
 * JOBDECK_NODE_IPS (the nodes' addresses, newline-separated, in rank order) and the SkyPilot
 * names of the same (SKYPILOT_NODE_RANK, SKYPILOT_NUM_NODES, SKYPILOT_NODE_IPS, and
 * SKYPILOT_SETUP_NODE_RANK / SKYPILOT_SETUP_NODE_IPS), after the task's envs (jobdeck's win).
 */

/** Name of the rank script in a multi-node attempt's folder (its presence marks a gang). */
export const RANK_FILE = 'rank.sh';
/** Name of the file listing each rank's log path (NUL-separated, in rank order). */
export const LOGS_FILE = 'logs';
/** Name of the file the batch script writes with the nodes' addresses (newline-separated, rank order). */
export const NODES_FILE = 'nodes';
/** Name of the file cancel() leaves so the batch script starts no further step. */
export const STOP_FILE = 'stop';

/** Files of an earlier launch into the same folder that must not be mistaken for this one's. */
export function gangLeftovers(nodes: number): string[] {
  const out = [NODES_FILE, STOP_FILE, RANK_FILE, LOGS_FILE];
  for (let k = 0; k < nodes; k++) for (const stage of ['setup', 'run']) out.push(`exit.${stage}.rank-${k}`, `exit.${stage}.rank-${k}.tmp`);
  return out;
}

/** True when the attempt folder holds a multi-node attempt (its cancel signals the steps). */
export function isGang(attemptDir: string): boolean {
  return existsSync(path.join(recordDirOf(attemptDir), RANK_FILE));
}

// The batch script of a multi-node attempt. Static text: inputs arrive as arguments and files of
// the attempt folder; never interpolated. `bash -p` as for one node (lib/executors/slurm/launch.ts).
// The task's envs never enter this shell: the rank script hands them to the wrapper.
// The TERM trap marks a stop by Slurm (job cancel, node failure): the ranks' ends then decide
// nothing (no record: lost) — jobdeck's own cancel signals the steps, not this script.
//   $1 attempt dir  $2 workdir  $3 has setup  $4 has run  $5 nodes  $6 CPUs per node
// (No dollar-brace in this text: it is a template literal.)
/** The batch script of a multi-node attempt (bash; arguments above). */
export const GANG_BATCH = String.raw`#!/bin/bash -p
# jobdeck Slurm batch script of a multi-node attempt (generated; do not edit)
__jobdeck_dir=$1 __jobdeck_workdir=$2 __jobdeck_setup=$3 __jobdeck_run=$4 __jobdeck_n=$5 __jobdeck_cpus=$6
__jobdeck_stopped=0
trap '__jobdeck_stopped=1' TERM INT HUP
__jobdeck_mv=/bin/mv; [ -x "$__jobdeck_mv" ] || __jobdeck_mv=/usr/bin/mv
__jobdeck_sync=/bin/sync; [ -x "$__jobdeck_sync" ] || __jobdeck_sync=/usr/bin/sync; [ -x "$__jobdeck_sync" ] || __jobdeck_sync=
if [ ! -r "$__jobdeck_dir/env" ]; then
  echo "jobdeck: cannot read $__jobdeck_dir/env on $(hostname 2>/dev/null) (is the attempt folder on a shared file system?)" >&2
  exit 1
fi
# The nodes' addresses in rank order: Slurm's NodeAddr, else what the name resolves to; and their
# names, for the attempt's record of where it ran (Attempt.nodes).
__jobdeck_ips=
__jobdeck_hosts=
for __jobdeck_node in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
  __jobdeck_hosts=$__jobdeck_hosts$__jobdeck_node$'\n'
  __jobdeck_addr=$(scontrol -o show node "$__jobdeck_node" 2>/dev/null | sed -n 's/.*[[:space:]]NodeAddr=\([^[:space:]]*\).*/\1/p')
  if ! [[ $__jobdeck_addr =~ ^[0-9.]+$|: ]]; then
    __jobdeck_addr=$(getent ahosts "$__jobdeck_node" 2>/dev/null | awk 'NR == 1 { print $1 }')
    [ -n "$__jobdeck_addr" ] || __jobdeck_addr=$__jobdeck_node
  fi
  __jobdeck_ips=$__jobdeck_ips$__jobdeck_addr$'\n'
done
printf '%s' "$__jobdeck_ips" >"$__jobdeck_dir/nodes.tmp" && "$__jobdeck_mv" -f -- "$__jobdeck_dir/nodes.tmp" "$__jobdeck_dir/nodes"
printf '%s' "$__jobdeck_hosts" >"$__jobdeck_dir/hosts.tmp" && "$__jobdeck_mv" -f -- "$__jobdeck_dir/hosts.tmp" "$__jobdeck_dir/hosts"

__jobdeck_write() { # record-line: the attempt's exit record (tmp, rename, sync: as the wrapper)
  printf '%s\n' "$1" >"$__jobdeck_dir/exit.tmp"
  "$__jobdeck_mv" -f -- "$__jobdeck_dir/exit.tmp" "$__jobdeck_dir/exit"
  [ -n "$__jobdeck_sync" ] && "$__jobdeck_sync" -- "$__jobdeck_dir/exit" "$__jobdeck_dir"
}
__jobdeck_record() { # rank record-line: the attempt's exit record from one rank's, naming it
  __jobdeck_write "{\"rank\":$1,\"nodes\":$__jobdeck_n,$(printf '%s' "$2" | sed 's/^{//')"
  __jobdeck_code=$(printf '%s' "$2" | sed -n 's/.*"exitCode":\([0-9]*\).*/\1/p')
}

# Decides a step from the ranks' records: 0 every rank exited 0; 1 a failure decided (record
# written; the exit code is in __jobdeck_code); 2 lost (no record).
__jobdeck_decide() { # stage
  local k f rec code at own= own_at= own_rec= stop= stop_at= stop_rec= missing=
  for ((k = 0; k < __jobdeck_n; k++)); do
    f=$__jobdeck_dir/exit.$1.rank-$k
    rec=
    [ -s "$f" ] && IFS= read -r rec <"$f"
    if ! [[ $rec =~ \"exitCode\":[0-9]+ ]]; then missing="$missing $k"; continue; fi
    code=$(printf '%s' "$rec" | sed -n 's/.*"exitCode":\([0-9]*\).*/\1/p')
    [ "$code" = 0 ] && continue
    at=$(printf '%s' "$rec" | sed -n 's/.*"endedAtMs":\([0-9]*\).*/\1/p')
    [ -n "$at" ] || at=0
    if [[ $rec == *'"stopped":true'* ]]; then
      if [ -z "$stop" ] || [ "$at" -lt "$stop_at" ]; then stop=$k stop_at=$at stop_rec=$rec; fi
    elif [ -z "$own" ] || [ "$at" -lt "$own_at" ]; then own=$k own_at=$at own_rec=$rec; fi
  done
  if [ -n "$own" ]; then
    __jobdeck_record "$own" "$own_rec"
    return 1
  fi
  if [ -n "$missing" ]; then
    echo "jobdeck: rank$missing of $__jobdeck_n recorded no exit status ($1): a node failed or its processes were killed" >&2
    return 2
  fi
  if [ -n "$stop" ]; then
    __jobdeck_record "$stop" "$stop_rec"
    return 1
  fi
  return 0
}

__jobdeck_step() { # stage has-setup has-run: one srun step, every rank through the wrapper
  [ -e "$__jobdeck_dir/stop" ] && exit 143
  srun --nodes="$__jobdeck_n" --ntasks="$__jobdeck_n" --ntasks-per-node=1 --cpus-per-task="$__jobdeck_cpus" \
    --quiet --kill-on-bad-exit=1 --mpi=none --input=none --export=ALL --job-name="$SLURM_JOB_NAME-$1" \
    "$BASH" -p -- "$__jobdeck_dir/rank.sh" "$__jobdeck_dir" "$__jobdeck_workdir" "$1" "$2" "$3" "$__jobdeck_n" &
  local pid=$!
  while :; do
    wait "$pid"
    kill -0 "$pid" 2>/dev/null || break
  done
  [ "$__jobdeck_stopped" = 1 ] && exit 143
  __jobdeck_decide "$1"
  case $? in
    1) exit "$__jobdeck_code" ;;
    2) exit 1 ;;
  esac
}

__jobdeck_code=0
[ "$__jobdeck_setup" = 1 ] && __jobdeck_step setup 1 0
__jobdeck_step run 0 "$__jobdeck_run"
__jobdeck_write "{\"phase\":\"run\",\"exitCode\":0,\"endedAtMs\":$(date +%s%3N),\"nodes\":$__jobdeck_n}"
exit 0
`;

// The rank script: one task of a step, on its node. It finds its log (entry SLURM_PROCID of the
// logs file), collects the env file's records and jobdeck's rank variables (never assigned in
// this shell) and runs the wrapper with them through env(1), writing its own exit record.
//   $1 attempt dir  $2 workdir  $3 stage (setup | run)  $4 has setup  $5 has run  $6 nodes
/** The rank script of a multi-node attempt (bash; arguments above). */
export const RANK_SCRIPT = String.raw`#!/bin/bash -p
# jobdeck rank script of a multi-node attempt (generated; do not edit)
__jobdeck_dir=$1 __jobdeck_workdir=$2 __jobdeck_stage=$3 __jobdeck_setup=$4 __jobdeck_run=$5 __jobdeck_n=$6
__jobdeck_rank=$SLURM_PROCID
__jobdeck_log=
__jobdeck_i=0
while IFS= read -r -d '' __jobdeck_l; do
  if [ "$__jobdeck_i" = "$__jobdeck_rank" ]; then __jobdeck_log=$__jobdeck_l; break; fi
  __jobdeck_i=$((__jobdeck_i + 1))
done <"$__jobdeck_dir/logs"
if [ -z "$__jobdeck_log" ]; then
  echo "jobdeck: no log path for rank $__jobdeck_rank in $__jobdeck_dir/logs" >&2
  exit 1
fi
__jobdeck_ips=$(<"$__jobdeck_dir/nodes")
set --
while IFS= read -r -d '' __jobdeck_kv; do set -- "$@" "$__jobdeck_kv"; done <"$__jobdeck_dir/env"
__jobdeck_mv=/bin/mv; [ -x "$__jobdeck_mv" ] || __jobdeck_mv=/usr/bin/mv
__jobdeck_sync=/bin/sync; [ -x "$__jobdeck_sync" ] || __jobdeck_sync=/usr/bin/sync; [ -x "$__jobdeck_sync" ] || __jobdeck_sync=
__jobdeck_env=/usr/bin/env; [ -x "$__jobdeck_env" ] || __jobdeck_env=/bin/env
exec "$__jobdeck_env" -- "$@" \
  "JOBDECK_NODE_RANK=$__jobdeck_rank" "JOBDECK_NUM_NODES=$__jobdeck_n" "JOBDECK_NODE_IPS=$__jobdeck_ips" \
  "SKYPILOT_NODE_RANK=$__jobdeck_rank" "SKYPILOT_NUM_NODES=$__jobdeck_n" "SKYPILOT_NODE_IPS=$__jobdeck_ips" \
  "SKYPILOT_SETUP_NODE_RANK=$__jobdeck_rank" "SKYPILOT_SETUP_NODE_IPS=$__jobdeck_ips" \
  "$BASH" -p -- "$__jobdeck_dir/wrapper.sh" "$__jobdeck_dir" "$__jobdeck_log" "$__jobdeck_workdir" "$__jobdeck_mv" "$__jobdeck_sync" \
  "$__jobdeck_setup" "$__jobdeck_run" "exit.$__jobdeck_stage.rank-$__jobdeck_rank"
`;
