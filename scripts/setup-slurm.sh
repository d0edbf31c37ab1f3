#!/usr/bin/env bash
# Install, configure, start and verify a single-node Slurm cluster on this host
# (munged + slurmctld + slurmd, partition "debug"), to develop and test against a real scheduler.
#
# Idempotent: when everything is up and the config is current it only verifies.
# Recovers from dead daemons, stale pid files and a node left DOWN/DRAINED.
# Prints "slurm: ready (<version>, node <host>, partition debug)"; exits non-zero
# naming what failed. Must run as root (Debian 12; no systemd needed).
#
# Environment:
#   SETUP_SLURM_WAIT     how long to wait for each daemon and for the node (default 30)
set -euo pipefail

WAIT="${SETUP_SLURM_WAIT:-30}"
PARTITION=debug
CONF_DIR=/etc/slurm
CONF="$CONF_DIR/slurm.conf"
LOG_DIR=/var/log/slurm
RUN_DIR=/run/slurm
CTLD_STATE=/var/spool/slurmctld
SLURMD_SPOOL=/var/spool/slurmd
CTLD_PID="$RUN_DIR/slurmctld.pid"
SLURMD_PID="$RUN_DIR/slurmd.pid"
MUNGE_KEY=/etc/munge/munge.key
MUNGE_PID=/run/munge/munged.pid
PACKAGES=(slurmctld slurmd slurm-client munge)

export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:${PATH:-}"
# srun and friends read SLURM_* (an inherited SLURM_JOB_ID would make the check
# below a step of someone else's job).
for v in "${!SLURM_@}"; do unset "$v"; done

die() { echo "setup-slurm: $*" >&2; exit 1; }

# Run a command quietly; on failure show its output and die with a message.
quiet() {
    local what="$1"; shift
    local out
    if ! out="$("$@" 2>&1)"; then
        printf '%s\n' "$out" >&2
        die "$what failed: $*"
    fi
}

# Poll "$@" every 0.2 s for up to $WAIT seconds.
wait_for() {
    local i
    for ((i = 0; i < WAIT * 5; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

# Pids of the daemon named $1. Matched on the exact process name, so a daemon
# started by hand or by a Debian init script (other pid file) is found too,
# and slurmstepd (running jobs) never is.
daemon_pids() { pgrep -x "$1" || true; }

# Stop every $1 process (TERM, KILL after 10 s) and remove its pid file $2.
stop_daemon() {
    local pids i
    mapfile -t pids < <(daemon_pids "$1")
    [ "${#pids[@]}" -gt 0 ] || { rm -f "$2"; return 0; }
    kill "${pids[@]}" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        [ -n "$(daemon_pids "$1")" ] || break
        sleep 0.2
    done
    mapfile -t pids < <(daemon_pids "$1")
    [ "${#pids[@]}" -eq 0 ] || kill -9 "${pids[@]}" 2>/dev/null || true
    rm -f "$2"
}

[ "$(id -u)" -eq 0 ] || die "must run as root"

# One run at a time (e.g. CI and a developer shell): a second run waits here.
# The daemons are started with fd 9 closed, or they would hold the lock for ever.
exec 9>/run/setup-slurm.lock
flock -w 600 9 || die "lock: another setup-slurm.sh is still running after 600s"

# ---------------------------------------------------------------- packages
missing=()
for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    # Wait for a dpkg lock held by another apt run instead of failing at once.
    quiet "apt-get update" apt-get update -qq -o DPkg::Lock::Timeout=300
    quiet "apt-get install ${missing[*]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}"
fi
for b in munged mungekey slurmctld slurmd srun sinfo scontrol; do
    command -v "$b" >/dev/null || die "packages: $b not found after install"
done

HOST="$(hostname -s 2>/dev/null || uname -n)"
HOST="${HOST%%.*}"
[ -n "$HOST" ] || die "hostname: empty short hostname"

# ---------------------------------------------------------------- munge
# munged refuses a key that others can read and directories it does not own.
[ -s "$MUNGE_KEY" ] || quiet "munge: key creation" mungekey --create --keyfile="$MUNGE_KEY"
chown munge:munge "$MUNGE_KEY"
chmod 0400 "$MUNGE_KEY"
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
if ! munge_ok; then
    stop_daemon munged "$MUNGE_PID"   # a live but broken munged (e.g. old key)
    # --force: start even if a dead munged left its socket and lock file behind.
    quiet "munge: munged start" runuser -u munge -- munged --force 9>&-
    wait_for munge_ok || die "munge: munged does not answer (log: /var/log/munge/munged.log)"
fi

# ---------------------------------------------------------------- slurm.conf
install -d -m 0755 "$CONF_DIR" "$LOG_DIR" "$RUN_DIR" "$CTLD_STATE" "$SLURMD_SPOOL"

# Describe the node exactly as slurmd detects it, so it is never drained for a
# mismatch; keep 1 GiB of memory back for the daemons and the host.
hw="$(slurmd -C 2>/dev/null | head -n1)" || true
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$hw"; }
CPUS="$(field CPUs)"
SOCKETS="$(field SocketsPerBoard)"
CORES="$(field CoresPerSocket)"
THREADS="$(field ThreadsPerCore)"
MEM_MB="$(field RealMemory)"
topology="Sockets=$SOCKETS CoresPerSocket=$CORES ThreadsPerCore=$THREADS"
if [ -z "$CPUS" ] || [ -z "$SOCKETS" ] || [ -z "$CORES" ] || [ -z "$THREADS" ]; then
    CPUS="$(nproc)"
    topology=""
fi
[ -n "$MEM_MB" ] || MEM_MB="$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)"
REAL_MEM=$((MEM_MB - 1024))
[ "$REAL_MEM" -gt 0 ] || die "slurm.conf: too little memory ($MEM_MB MiB)"

new_conf="$(cat <<EOF
# Written by scripts/setup-slurm.sh: single-node cluster for the sandbox Slurm driver.
ClusterName=sandbox
# Pinned to loopback: works even if the host name is missing from /etc/hosts.
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
# No usable cgroup plugin here (cgroup v1 hybrid): track steps by process tree
# and enforce --mem by sampling RSS every second (OverMemoryKill).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherParams=OverMemoryKill
JobAcctGatherFrequency=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without it a job lacking --mem reserves all of the node's memory and runs alone.
DefMemPerCPU=1024
# Short grace between SIGTERM and SIGKILL; finished jobs leave squeue quickly.
KillWait=2
MinJobAge=5
# Room for 1,000-job batches and many concurrent steps.
MaxJobCount=20000
MaxStepCount=100000
# Try to start every job when it is submitted (never "defer"): srun blocks until then.
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
# Also how long srun, sinfo and scancel retry while slurmctld is unreachable.
MessageTimeout=10
# Reject at submit what can never run here (e.g. -n3 on 2 CPUs) instead of
# leaving it pending for ever with reason PartitionConfig.
EnforcePartLimits=ALL
# srun forks a helper that cancels the job if srun dies. If both are killed
# (kill -9 of the process group) the job would stay RUNNING for ever; with this
# slurmctld cancels it once srun stops answering pings (about a minute later).
InactiveLimit=15
# A node that registers again (daemon restart, reboot) is usable without an admin.
ReturnToService=2
StateSaveLocation=$CTLD_STATE
SlurmdSpoolDir=$SLURMD_SPOOL
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No slurmdbd, so sacct has nothing; this keeps one line per finished job
# (state, exit code, times; no CPU time or memory).
JobCompType=jobcomp/filetxt
JobCompLoc=$LOG_DIR/jobcomp.log
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS $topology RealMemory=$REAL_MEM State=UNKNOWN
# One job per execution: up to 32 jobs may share each core (CPUs are only a
# scheduling token here, nothing pins them), so memory is what limits starts.
PartitionName=$PARTITION Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:32
EOF
)"

conf_changed=0
if [ "$(cat "$CONF" 2>/dev/null)" != "$new_conf" ]; then
    printf '%s\n' "$new_conf" >"$CONF.tmp"
    mv -f "$CONF.tmp" "$CONF"
    conf_changed=1
fi

# ---------------------------------------------------------------- daemons
if [ "$conf_changed" -eq 1 ]; then
    # Node and partition definitions only take effect on a restart.
    stop_daemon slurmd "$SLURMD_PID"
    stop_daemon slurmctld "$CTLD_PID"
fi

ctld_ok() { scontrol ping 2>/dev/null | grep -q 'is UP'; }
ctld_started=0
if [ -z "$(daemon_pids slurmctld)" ]; then
    ctld_started=1
    rm -f "$CTLD_PID"
    # Daemonizes itself (own session), so it outlives this script.
    # -i: start even if a kill -9 left a state file half written.
    quiet "slurmctld: start" slurmctld -i 9>&-
fi
if ! wait_for ctld_ok; then
    tail -n 20 "$LOG_DIR/slurmctld.log" >&2 || true
    die "slurmctld: not answering within ${WAIT}s (log: $LOG_DIR/slurmctld.log)"
fi

if [ -z "$(daemon_pids slurmd)" ]; then
    rm -f "$SLURMD_PID"
    quiet "slurmd: start" slurmd 9>&-
fi

# State as sinfo prints it: idle, mixed, allocated, down, drained, idle* (* = not responding), ...
node_state() { sinfo -h -N -n "$HOST" -o '%T' 2>/dev/null | head -n1; }
node_usable() { case "$(node_state)" in idle | mixed | allocated | completing) return 0 ;; *) return 1 ;; esac; }
state=""
for ((i = 0; i < WAIT * 5; i++)); do
    state="$(node_state)"
    case "$state" in
    idle | mixed | allocated | completing) break ;;
    down | drain* | fail*)
        # Left DOWN/DRAINED by an earlier run ("Node unexpectedly rebooted",
        # "Kill task failed", ...); "*" states wait for slurmd to answer.
        scontrol update nodename="$HOST" state=resume >/dev/null 2>&1 || true ;;
    esac
    [ -n "$(daemon_pids slurmd)" ] || break   # it died: no point in waiting
    sleep 0.2
done
if ! node_usable; then
    tail -n 20 "$LOG_DIR/slurmd.log" >&2 || true
    reason="$(sinfo -h -N -n "$HOST" -o '%E' 2>/dev/null | head -n1)"
    die "slurmd: node $HOST is '${state:-unknown}' (${reason:-no reason}) after ${WAIT}s (log: $LOG_DIR/slurmd.log)"
fi
# After everything was killed (e.g. the end of a CI run) a restarted slurmctld
# recovers the old jobs as RUNNING from its state file; they would hold their
# memory until InactiveLimit catches them about a minute later. With no srun,
# salloc or slurmstepd left on this (only) host, every job in the queue is such
# a leftover.
if [ "$ctld_started" -eq 1 ] &&
    ! ps -eo stat=,comm= | awk '$1 !~ /^Z/ && $2 ~ /^(srun|salloc|slurmstepd)$/ {f = 1} END {exit !f}'; then
    mapfile -t stale < <(squeue -h -o '%i' 2>/dev/null)
    [ "${#stale[@]}" -eq 0 ] || scancel "${stale[@]}" >/dev/null 2>&1 || true
fi
# A partition set DOWN by hand survives restarts in the saved state.
if [ "$(sinfo -h -p "$PARTITION" -o '%a' 2>/dev/null)" != up ]; then
    scontrol update partitionname="$PARTITION" state=up >/dev/null 2>&1 \
        || die "slurmctld: partition $PARTITION is not up and cannot be set up"
fi

# ---------------------------------------------------------------- verify
# A slurmctld killed uncleanly may hand out again job ids it had not saved yet;
# slurmd rejects those ("Job credential revoked"). Each try uses up one such id.
for ((try = 1; ; try++)); do
    out="$(timeout 60 srun -N1 -n1 --mem=16 --time=1 -p "$PARTITION" --job-name=setup-slurm-check \
        true </dev/null 2>&1 9>&-)" && break
    if [ "$try" -ge 10 ] || ! grep -q 'credential revoked' <<<"$out"; then
        printf '%s\n' "$out" >&2
        die "srun: 'srun -N1 -n1 true' failed"
    fi
done
sinfo -h -p "$PARTITION" -o '%P %a %T' 2>/dev/null | grep -q . || die "sinfo: partition $PARTITION not listed"

version="$(scontrol --version 2>/dev/null | awk '{print $2}')"
echo "slurm: ready (${version:-unknown}, node $HOST, partition $PARTITION)"
