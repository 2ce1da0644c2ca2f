#!/usr/bin/env bash
# Stops the one-node Slurm started by scripts/slurm-up.sh. Idempotent (nothing running → no-op).
# Cancels every job first (so no slurmstepd or job process is orphaned), then stops slurmd,
# slurmctld and munged by the pids in their pidfiles (checked against the process name; no
# pkill). Needs root.
#   KEEP_JOBS=1   do not cancel jobs (running jobs survive a daemon restart: measured)
#   WIPE_STATE=1  also delete the saved job state (job ids then start again from 1)
set -uo pipefail

stop() { # stop PIDFILE COMM
  local pid
  [ -s "$1" ] || return 0
  pid=$(cat "$1" 2>/dev/null)
  if [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ]; then
    kill -TERM "$pid"
    for _ in $(seq 100); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
    if [ -e "/proc/$pid" ]; then echo "slurm-down: $2 ($pid) ignored TERM, sending KILL" >&2; kill -KILL "$pid"; fi
  fi
  rm -f "$1"
}

if ! command -v scontrol >/dev/null 2>&1; then echo "slurm-down: Slurm is not installed"; exit 0; fi

if [ "${KEEP_JOBS:-0}" != 1 ] && scontrol ping >/dev/null 2>&1; then
  ids=$(squeue -h -o %i 2>/dev/null || true)
  if [ -n "$ids" ]; then
    # shellcheck disable=SC2086 # one word per job id
    scancel $ids || true
    for _ in $(seq 150); do # up to 15 s (KillWait=10)
      [ -z "$(squeue -h -t PD,R,CG,S,CF -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
fi

stop /run/slurmd.pid slurmd
stop /run/slurmctld.pid slurmctld
stop /run/munge/munged.pid munged

if [ "${WIPE_STATE:-0}" = 1 ]; then
  rm -rf /var/spool/slurmctld/* /var/spool/slurmd/*
fi
echo "slurm-down: stopped"
