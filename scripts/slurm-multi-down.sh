#!/usr/bin/env bash
# Stops the emulated multi-node cluster of scripts/slurm-multi-up.sh. Idempotent. Cancels every
# job first (so no job process is orphaned), stops the daemons by the pids in their pidfiles
# (checked against the process name), then anything still living in the nodes' UTS namespaces
# (a job process whose slurmd was killed), and removes the namespaces and the bridge. Never
# signals a process by name. Needs root. Leaves munged (shared with the one-node cluster) alone.
#   WIPE_STATE=1   also delete the saved job state (job ids then start again from 1)
set -uo pipefail

BASE=${SLURM_MULTI_BASE:-/var/lib/jobdeck-slurm-multi}
BRIDGE=jdmn0
export SLURM_CONF=$BASE/slurm.conf

alive() { # alive PIDFILE COMM
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ]
}
stop() { # stop PIDFILE COMM
  local pid
  alive "$1" "$2" || { rm -f "$1"; return 0; }
  pid=$(cat "$1")
  kill -TERM "$pid"
  for _ in $(seq 100); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
  [ -e "/proc/$pid" ] && kill -KILL "$pid"
  rm -f "$1"
}

if [ -f "$SLURM_CONF" ] && alive "$BASE/run/slurmctld.pid" slurmctld && scontrol ping >/dev/null 2>&1; then
  ids=$(squeue -h -o %i 2>/dev/null || true)
  if [ -n "$ids" ]; then
    # shellcheck disable=SC2086 # one word per job id
    scancel --full $ids 2>/dev/null || true
    for _ in $(seq 100); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
fi
for f in "$BASE"/run/slurmd-*.pid; do [ -e "$f" ] && stop "$f" slurmd; done
stop "$BASE/run/slurmctld.pid" slurmctld

# What still runs in a node's UTS namespace (slurmstepd or job processes of a killed slurmd).
if [ -s "$BASE/run/uts-ns" ]; then
  for sig in TERM KILL; do
    for d in /proc/[0-9]*; do
      ns=$(readlink "$d/ns/uts" 2>/dev/null) || continue
      grep -qxF "$ns" "$BASE/run/uts-ns" && kill -"$sig" "${d#/proc/}" 2>/dev/null
    done
    [ $sig = TERM ] && sleep 1
  done
fi
for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^jdmn-n[0-9]+$/ {print $1}'); do ip netns del "$ns"; done
ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
rm -f "$BASE"/run/*
[ "${WIPE_STATE:-0}" = 1 ] && rm -rf "$BASE/state" "$BASE/spool"
echo "slurm-multi-down: stopped"
