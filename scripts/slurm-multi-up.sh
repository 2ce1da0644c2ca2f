#!/usr/bin/env bash
# Starts an emulated N-node Slurm cluster on this one machine, for the multi-node tests of
# jobdeck's Slurm executor (docs/slurm.md, "An emulated multi-node cluster"). Separate from the
# one-node cluster of scripts/slurm-up.sh: its own configuration, state, ports and controller;
# only munged is shared (started by slurm-up.sh, or here when missing).
#
# Each node is a real slurmd in its own network namespace (address $NET.1<i> on the bridge
# $BRIDGE, the host being $NET.1; no route out, no forwarding) and its own UTS and mount
# namespaces: hostname jdn<i>, a private /etc/hosts naming every node, and /etc/slurm/slurm.conf
# bind-mounted to this cluster's configuration (inside the node only), so Slurm commands run by a
# job talk to this cluster. The nodes share the machine's file system (JOBDECK_HOME included).
# `nsenter --net` enters a namespace; `ip netns exec` is not used (it remounts /sys and slurmd
# then finds no cgroup file system).
#
# Idempotent and fast when up (~0.1 s): only what is missing is made or started — a bridge, a
# namespace, a dead slurmd (a test kills one to fail a node) — and a node that came back DOWN is
# resumed. A changed configuration restarts the daemons. Serialized with flock. Needs root.
#
#   scripts/slurm-multi-up.sh [N]      N nodes (default $SLURM_MULTI_NODES, else 3)
#   source $BASE/env.sh                sets SLURM_CONF for this cluster's commands
#
# Environment (all optional): SLURM_MULTI_BASE (default /var/lib/jobdeck-slurm-multi),
# SLURM_MULTI_NET (first three octets, default 10.251.0), SLURM_MULTI_CPUS (CPUs per node,
# default nproc), SLURM_MULTI_MEM (MB per node, default 1000), SLURM_MULTI_PORT (controller port,
# default 17917; each slurmd listens on the next one in its own namespace).
# Stop with scripts/slurm-multi-down.sh.
set -euo pipefail

N=${1:-${SLURM_MULTI_NODES:-3}}
BASE=${SLURM_MULTI_BASE:-/var/lib/jobdeck-slurm-multi}
NET=${SLURM_MULTI_NET:-10.251.0}
CPUS=${SLURM_MULTI_CPUS:-$(nproc)}
MEM=${SLURM_MULTI_MEM:-1000}
CTLD_PORT=${SLURM_MULTI_PORT:-17917}
SLURMD_PORT=$((CTLD_PORT + 1))
BRIDGE=jdmn0
CONF=$BASE/slurm.conf
export SLURM_CONF=$CONF
CTLD_HOST=$(hostname -s)

say() { echo "slurm-multi-up: $*"; }
die() { echo "slurm-multi-up: $*" >&2; exit 1; }
[[ "$N" =~ ^[1-9][0-9]?$ ]] || die "N must be a node count from 1 to 99, got '$N'"

node() { echo "jdn$1"; }
addr() { echo "$NET.$((10 + $1))"; }
netns() { echo "jdmn-n$1"; }

desired_conf() {
  cat <<EOF
# Written by jobdeck scripts/slurm-multi-up.sh (emulated $N-node cluster); rewritten when it differs.
ClusterName=jdmulti
SlurmctldHost=$CTLD_HOST($NET.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/%n
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=5
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$BASE/log/jobcomp.log
ReturnToService=2
MinJobAge=300
KillWait=5
SlurmdTimeout=10
MessageTimeout=5
EOF
  for i in $(seq 1 "$N"); do
    echo "NodeName=$(node "$i") NodeHostname=$(node "$i") NodeAddr=$(addr "$i") CPUs=$CPUS RealMemory=$MEM State=UNKNOWN"
  done
  echo "PartitionName=multi Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
}

desired_hosts() {
  printf '127.0.0.1 localhost\n%s %s\n' "$NET.1" "$CTLD_HOST"
  for i in $(seq 1 "$N"); do echo "$(addr "$i") $(node "$i")"; done
}

alive() { # alive PIDFILE COMM -> the pidfile names a live process with that comm
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ]
}
ready_nodes() { # nodes responding and usable (a trailing * means not responding)
  sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 !~ /\*$/ && $2 ~ /^(idle|mixed|allocated|completing)/ {print $1}' | sort -u | wc -l
}
all_up() {
  [ -f "$CONF" ] && [ "$(cat "$CONF")" = "$(desired_conf)" ] || return 1
  alive "$BASE/run/slurmctld.pid" slurmctld || return 1
  for i in $(seq 1 "$N"); do alive "$BASE/run/slurmd-$(node "$i").pid" slurmd || return 1; done
  [ "$(ready_nodes)" = "$N" ]
}

if command -v slurmd >/dev/null 2>&1 && all_up; then
  say "already up ($N nodes, $NET.11–$(addr "$N"), SLURM_CONF=$CONF)"
  exit 0
fi
[ "$(id -u)" = 0 ] || die "the cluster is not up and starting it needs root"

install -d -m 0755 "$BASE" "$BASE/state" "$BASE/spool" "$BASE/run" "$BASE/log"
exec 9>"$BASE/run/up.lock"
flock -w 120 9 || die "another slurm-multi-up.sh holds $BASE/run/up.lock"
t0=$(date +%s%N)

# 1. packages and munge (shared with the one-node cluster)
if ! dpkg -s slurmctld slurmd slurm-client munge >/dev/null 2>&1; then
  say "installing slurm-wlm munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq slurm-wlm munge >/dev/null || { apt-get update -qq && apt-get install -y -qq slurm-wlm munge >/dev/null; }
fi
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
  install -d -o munge -g munge -m 0755 /run/munge
  [ -s /etc/munge/munge.key ] || runuser -u munge -- /usr/sbin/mungekey --create --keyfile=/etc/munge/munge.key
  alive /run/munge/munged.pid munged || { rm -f /run/munge/munged.pid; runuser -u munge -- /usr/sbin/munged 9>&-; }
  for _ in $(seq 50); do munge -n </dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n </dev/null | unmunge >/dev/null 2>&1 || die "munge does not work (see /var/log/munge/munged.log)"
fi

# 2. the network: a bridge for the host side, one namespace and veth pair per node
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
  ip link add "$BRIDGE" type bridge
  ip addr add "$NET.1/24" dev "$BRIDGE"
fi
ip link set "$BRIDGE" up
for i in $(seq 1 "$N"); do
  ns=$(netns "$i")
  [ -e "/run/netns/$ns" ] || ip netns add "$ns"
  if ! ip link show "$ns-h" >/dev/null 2>&1; then
    ip link add "$ns-h" type veth peer name eth0 netns "$ns"
    ip -n "$ns" addr add "$(addr "$i")/24" dev eth0
  fi
  ip link set "$ns-h" master "$BRIDGE" up
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
done

# 3. configuration, rewritten only when it changes (then the daemons restart)
desired_hosts >"$BASE/hosts.tmp" && mv -f "$BASE/hosts.tmp" "$BASE/hosts"
echo "export SLURM_CONF=$CONF" >"$BASE/env.sh"
CHANGED=0
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$(desired_conf)" ]; then
  desired_conf >"$CONF.tmp" && mv -f "$CONF.tmp" "$CONF"
  CHANGED=1
fi
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
  for f in "$BASE"/run/slurmd-*.pid; do [ -e "$f" ] && stop_daemon "$f" slurmd; done
  stop_daemon "$BASE/run/slurmctld.pid" slurmctld
fi

# 4. daemons: the controller on the host (listening on the bridge), one slurmd per node
if ! alive "$BASE/run/slurmctld.pid" slurmctld; then
  rm -f "$BASE/run/slurmctld.pid"
  slurmctld -f "$CONF" 9>&- || { tail -5 "$BASE/log/slurmctld.log" >&2; die "slurmctld failed to start"; }
fi
for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.1; done
scontrol ping >/dev/null 2>&1 || { tail -5 "$BASE/log/slurmctld.log" >&2; die "slurmctld does not answer ping"; }
: >"$BASE/run/uts-ns.tmp"
for i in $(seq 1 "$N"); do
  n=$(node "$i")
  pidfile=$BASE/run/slurmd-$n.pid
  if ! alive "$pidfile" slurmd; then
    rm -f "$pidfile"
    install -d -m 0755 "$BASE/spool/$n"
    nsenter --net="/run/netns/$(netns "$i")" unshare --uts --mount --propagation private sh -c "hostname $n &&
      mount --bind $BASE/hosts /etc/hosts &&
      { [ ! -f /etc/slurm/slurm.conf ] || mount --bind $CONF /etc/slurm/slurm.conf; } &&
      exec slurmd -f $CONF -N $n" 9>&- || die "slurmd of $n failed to start (see $BASE/log/slurmd-$n.log)"
    for _ in $(seq 50); do alive "$pidfile" slurmd && break; sleep 0.1; done
  fi
  alive "$pidfile" slurmd && readlink "/proc/$(cat "$pidfile")/ns/uts" >>"$BASE/run/uts-ns.tmp"
done
mv -f "$BASE/run/uts-ns.tmp" "$BASE/run/uts-ns"

# 5. wait until every node is usable; resume one that came back DOWN (a killed slurmd)
for k in $(seq 1 150); do
  [ "$(ready_nodes)" = "$N" ] && break
  if [ "$k" -gt 10 ]; then
    for n in $(sinfo -h -N -t down,drain,fail -o %N 2>/dev/null | sort -u); do scontrol update NodeName="$n" State=RESUME 2>/dev/null || true; done
  fi
  sleep 0.2
done
[ "$(ready_nodes)" = "$N" ] || { sinfo -N >&2 || true; die "not every node is ready; see $BASE/log/"; }
say "up ($N nodes, $NET.11–$(addr "$N"), $CPUS CPUs each) in $(( ($(date +%s%N) - t0) / 1000000 )) ms; SLURM_CONF=$CONF"
