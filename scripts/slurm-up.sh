#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine for jobdeck's Slurm executor (tests, CI, demos).
# Debian 12 (slurm-wlm 22.05), run as root, no systemd: munged, slurmctld and slurmd are started
# by hand. Idempotent and fast when already up: installs only what is missing, rewrites
# /etc/slurm/slurm.conf only when its content changes, starts only daemons that are not running,
# and returns once `scontrol ping` answers and `sinfo` shows the node usable (idle/mixed/alloc).
# Serialized with flock, so concurrent callers (ensure-services.sh, a test's beforeAll) are safe.
#
# Environment (all optional):
#   SLURM_REALMEM    node RealMemory in MB (default 1000; must not exceed the machine's RAM, or the
#                    node goes INVALID)
#   SLURM_MINJOBAGE  seconds a finished job stays visible to scontrol/squeue (default 300); sacct
#                    (jobcomp/filetxt) keeps its state and exit code after that
#   SLURM_CPUS       CPUs of the node (default nproc)
# jobacct_gather/linux (every second) lets `sstat` report a running job's CPU and memory, which
# jobdeck samples per attempt; with no accounting storage (no slurmdbd) sacct has no usage of a
# finished job, so nothing after the last sample is recorded (docs/slurm.md "Resource usage").
# Stop with scripts/slurm-down.sh. What the executor needs of the cluster: docs/slurm.md.
set -euo pipefail

NODE=$(hostname -s)
CPUS=${SLURM_CPUS:-$(nproc)}
REALMEM=${SLURM_REALMEM:-1000}
MINJOBAGE=${SLURM_MINJOBAGE:-300}
CONF=/etc/slurm/slurm.conf
LOCK=/run/jobdeck-slurm-up.lock

say() { echo "slurm-up: $*"; }
die() { echo "slurm-up: $*" >&2; exit 1; }

ready_state() { # "idle*" (trailing *) means not responding -> not ready
  case "$1" in *'*') return 1 ;; idle*|mixed*|allocated*|completing*) return 0 ;; *) return 1 ;; esac
}
node_state() { sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n 1 || true; }

desired_conf() {
  cat <<EOF
# Written by jobdeck scripts/slurm-up.sh (one-node cluster); rewritten when it differs.
ClusterName=local
SlurmctldHost=$NODE
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
ReturnToService=2
MinJobAge=$MINJOBAGE
KillWait=10
NodeName=$NODE CPUs=$CPUS RealMemory=$REALMEM State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

# Fast path: everything up with the wanted configuration (no lock, no root needed).
if command -v scontrol >/dev/null 2>&1 && [ -f "$CONF" ] && [ "$(cat "$CONF" 2>/dev/null)" = "$(desired_conf)" ] \
  && scontrol ping >/dev/null 2>&1 && ready_state "$(node_state)"; then
  say "already up (node $NODE $(node_state))"
  exit 0
fi

[ "$(id -u)" = 0 ] || die "Slurm is not up and starting it needs root (run: sudo $0)"

exec 9>"$LOCK"
flock -w 120 9 || die "another slurm-up.sh holds $LOCK"

alive() { # alive PIDFILE COMM -> true if the pidfile names a live process with that comm
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ]
}

# 1. packages
if ! dpkg -s slurmctld slurmd slurm-client munge >/dev/null 2>&1; then
  say "installing slurm-wlm munge"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq slurm-wlm munge >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq slurm-wlm munge >/dev/null
  fi
fi

# 2. munge key and folders
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
  runuser -u munge -- /usr/sbin/mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key
chmod 0600 /etc/munge/munge.key

# 3. munged
if ! alive /run/munge/munged.pid munged; then
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged 9>&- # daemonizes itself; never inherits the lock
fi
for _ in $(seq 50); do munge -n </dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
munge -n </dev/null | unmunge >/dev/null 2>&1 || die "munge does not work (see /var/log/munge/munged.log)"

# 4. slurm.conf, rewritten only when its content changes
install -d -m 0755 /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
CHANGED=0
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$(desired_conf)" ]; then
  desired_conf >"$CONF.tmp"
  mv -f "$CONF.tmp" "$CONF"
  CHANGED=1
fi

# 5. daemons. A changed configuration restarts the daemons this script can stop (plugin changes
# such as ProctrackType need a restart; running jobs survive it, measured); a controller answering
# ping without a pidfile is never started twice (it gets `scontrol reconfigure`).
stop_daemon() { # stop_daemon PIDFILE COMM
  local pid
  alive "$1" "$2" || return 0
  pid=$(cat "$1")
  kill -TERM "$pid"
  for _ in $(seq 100); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
  [ -e "/proc/$pid" ] && kill -KILL "$pid"
  rm -f "$1"
}
if [ $CHANGED = 1 ]; then
  say "configuration changed: restarting the Slurm daemons"
  stop_daemon /run/slurmd.pid slurmd
  stop_daemon /run/slurmctld.pid slurmctld
fi
CTLD_RUNNING=0
if alive /run/slurmctld.pid slurmctld || scontrol ping >/dev/null 2>&1; then CTLD_RUNNING=1; fi
if [ $CTLD_RUNNING = 0 ]; then
  rm -f /run/slurmctld.pid
  # daemonizes; configuration/state errors go to its log file, not stderr
  slurmctld 9>&- || { tail -5 /var/log/slurm/slurmctld.log >&2; die "slurmctld failed to start"; }
elif [ $CHANGED = 1 ]; then
  scontrol reconfigure
fi
for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.1; done
scontrol ping >/dev/null 2>&1 || { tail -5 /var/log/slurm/slurmctld.log >&2; die "slurmctld does not answer ping"; }
if ! alive /run/slurmd.pid slurmd; then
  rm -f /run/slurmd.pid
  slurmd 9>&- || { tail -5 /var/log/slurm/slurmd.log >&2; die "slurmd failed to start"; }
fi

# 6. wait until the node is usable; resume it if it came back DOWN/DRAIN
st=''
for i in $(seq 120); do
  st=$(node_state)
  ready_state "$st" && break
  case "$st" in
    down*|drain*) [ "$i" -gt 5 ] && { scontrol update NodeName="$NODE" State=RESUME 2>/dev/null || true; } ;;
  esac
  sleep 0.25
done
ready_state "$st" || die "node $NODE is not ready (state '${st}'); see /var/log/slurm/*.log"
say "up (node $NODE $st, $CPUS CPUs)"
