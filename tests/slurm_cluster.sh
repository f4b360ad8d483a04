# shellcheck shell=bash disable=SC2154 # $tmp and $plugins come from the caller
# Sourced by tests/slurm_test.sh: a one-node Slurm of its own in $tmp, with
# munged, slurmctld and slurmd on free ports and private sockets, so that it
# runs beside any other test or a real Slurm. Needs $tmp and $plugins; sets
# $node and SLURM_CONF. Functions: cluster_start, cluster_stop, fail.

daemons=()  # pids of the daemons started here, stopped in reverse order

# A TCP port nobody listens on, outside the usual ephemeral range.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 12000))
    [[ -z $(ss -Htan "( sport = :$p )") ]] && { echo "$p"; return; }
  done
}

# Waits up to $2 seconds for the command $1 (a string) to succeed.
wait_until() {
  local deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    eval "$1" > /dev/null 2>&1 && return 0
    sleep 0.25
  done
  return 1
}

# Prints the end of every log that may explain a failure, then exits 1.
fail() {
  echo "FAIL: $*"
  local f
  for f in "$tmp"/log/* "$tmp"/job-*.out "$tmp"/run/logs/*/*.log; do
    [[ -f $f ]] || continue
    echo "---- tail $f"
    tail -n 25 "$f"
  done
  squeue 2>&1 | head -20
  exit 1
}

cluster_start() {
  mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/log"
  dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$tmp/munge/munge.key"
  munged -F --socket="$tmp/munge/socket" --key-file="$tmp/munge/munge.key" \
    --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/seed" \
    --log-file="$tmp/log/munged.log" > "$tmp/log/munged.out" 2>&1 &
  daemons+=($!)
  wait_until "[[ -S $tmp/munge/socket ]]" 10 || fail "munged did not start"

  node=$(hostname -s)
  local hw
  hw=$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]* //' -e 's/ *RealMemory=[0-9]*//')
  # Addresses by number: the machine's name need not resolve.
  cat > "$tmp/slurm.conf" <<EOF
ClusterName=ptxbtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/socket
CredType=cred/munge
PluginDir=$plugins
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# Slurm's default: the recipe's scheduler takes reports for 25 s within it.
KillWait=30
MinJobAge=600
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  # Nothing is confined by cgroups here (proctrack/linuxproc, task/none), but
  # slurmd still sets up its cgroup plugin: where cgroup v2 is mounted it
  # wants systemd (absent in containers) or a system.slice to put its steps
  # in. The v1 plugin on an empty folder of its own asks for neither.
  mkdir -p "$tmp/cgroup"
  printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=%s\n' "$tmp/cgroup" > "$tmp/cgroup.conf"
  export SLURM_CONF=$tmp/slurm.conf
  slurmctld -D -i > "$tmp/log/slurmctld.out" 2>&1 &
  daemons+=($!)
  slurmd -D -N "$node" -d "$(command -v slurmstepd)" > "$tmp/log/slurmd.out" 2>&1 &
  daemons+=($!)
  wait_until "[[ \$(sinfo -h -n $node -o %T) == idle ]]" 30
}

# Cancels every job, waits for them to end, then stops the daemons. Whatever
# of this cluster still runs then (a step slurmd could not end) carries its
# SLURM_CONF in its environment: it is killed by pid.
cluster_stop() {
  if [[ -n ${SLURM_CONF:-} ]]; then
    scancel -u root > /dev/null 2>&1
    wait_until "[[ -z \$(squeue -h) ]]" 20 || echo "jobs left at cleanup: $(squeue -h)"
  fi
  local i pid
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
    kill -TERM "${daemons[i]}" 2> /dev/null
    wait "${daemons[i]}" 2> /dev/null
  done
  [[ -n ${SLURM_CONF:-} ]] || return 0
  for pid in $(grep -l -s -a -F -x "SLURM_CONF=$SLURM_CONF" \
                 --null-data /proc/[0-9]*/environ | cut -d/ -f3); do
    [[ $pid == "$$" || $pid == "$BASHPID" ]] || kill -KILL "$pid" 2> /dev/null
  done
}
