#!/usr/bin/env bash
# deploy/slurm/ptxbench.sbatch on a one-node Slurm of its own: starts munged,
# slurmctld and slurmd from a temporary folder (own key, socket, ports, state),
# submits the recipe (scheduler, worker, a gateway on the first node) and a
# second job that joins a gateway to it, runs a small experiment through the
# CLI, checks that Slurm steps did the work and that scancel stops them.
#
#   tests/slurm_test.sh BUILD_DIR
#
# Exit 77 (skip) without root or without Slurm and munge. PTXB_SLURM_PREFIX=DIR
# uses binaries packed by scripts/device/pack_slurm.sh instead of the system's;
# PTXB_SLURM_REAL_WORKER=1 runs the real worker (GPU) on scripted answers
# instead of simulated executors. BUILD_DIR holds the ptxbench binaries in a
# build tree (worker/ptxbench-worker, ...) or side by side (a packed folder).
set -uo pipefail
build=$(cd "${1:?usage: slurm_test.sh BUILD_DIR}" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) == 0 ]] || skip "needs root (slurmd runs jobs as their user)"

prefix=${PTXB_SLURM_PREFIX:-}
if [[ -n $prefix ]]; then
  prefix=$(cd "$prefix" && pwd) || exit 1
  export PATH="$prefix/bin:$prefix/sbin:$PATH"
  # The machine's own libraries first; the packed ones fill what it lacks.
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$prefix/lib/slurm-wlm:\
/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:$prefix/lib/deps"
  plugins=$prefix/lib/slurm-wlm
else
  plugins=${PTXB_SLURM_PLUGIN_DIR:-/usr/lib/x86_64-linux-gnu/slurm-wlm}
  export PATH="$PATH:/usr/sbin:/sbin"
fi
for tool in munged slurmctld slurmd slurmstepd sbatch srun squeue sinfo scancel scontrol \
            python3 openssl ss; do
  command -v "$tool" > /dev/null || skip "$tool is not installed (scripts/setup.sh; or PTXB_SLURM_PREFIX)"
done
[[ -f $plugins/auth_munge.so ]] || skip "no Slurm plugins in $plugins (PTXB_SLURM_PLUGIN_DIR)"
(( $(nproc) >= 2 )) || skip "needs 2 CPUs: the recipe's job and the joining job take one each"

find_bin() {  # a build tree, or a packed folder
  local f
  for f in "$build/$1/$2" "$build/$2"; do [[ -x $f ]] && { echo "$f"; return; }; done
  echo "missing binary $2 under $build" >&2
  exit 1
}
cli=$(find_bin cli ptxbench) || exit 1
export PTXBENCH_SCHEDULER_BIN PTXBENCH_WORKER_BIN PTXBENCH_GATEWAY_BIN PTXBENCH_CLI_BIN
PTXBENCH_SCHEDULER_BIN=$(find_bin scheduler ptxbench-scheduler) || exit 1
PTXBENCH_WORKER_BIN=$(find_bin worker ptxbench-worker) || exit 1
PTXBENCH_GATEWAY_BIN=$(find_bin agent_gateway ptxbench-gateway) || exit 1
PTXBENCH_CLI_BIN=$cli

# A developer's own settings must not leak into the jobs.
# shellcheck disable=SC2046 # names, one a word
unset $(compgen -v | grep -E '^(PTXBENCH_[A-Z_]*|SLURM_[A-Z_]*|SBATCH_[A-Z_]*)$' |
        grep -v -E '^PTXBENCH_(SCHEDULER|WORKER|GATEWAY|CLI)_BIN$|^PTXBENCH_DATA_DIR$')

tmp=$(mktemp -d /tmp/ptxb-slurm.XXXXXX)
chmod 755 "$tmp"  # munged wants every folder above its socket searchable by all
# shellcheck source=tests/slurm_cluster.sh
source "$repo/tests/slurm_cluster.sh"
# PTXB_SLURM_KEEP=1 keeps the folder (logs, database) for a look afterwards.
trap 'cluster_stop; [[ ${PTXB_SLURM_KEEP:-0} == 1 ]] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
trap 'exit 143' TERM INT  # so that the cleanup runs
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start )) s"; }

cluster_start || fail "the one-node Slurm did not come up"
echo "slurm ($(command -v slurmctld)) up on $node after $(elapsed)"

# The recipe's job (scheduler, worker, gateway on the first node) and one that
# joins a gateway to it, as a CPU partition's job would. --exclusive=user lets
# both share the one node (the recipe asks for whole nodes).
export PTXBENCH_RUN_DIR=$tmp/run PTXBENCH_MAKE_CERTS=$repo/scripts/make_certs.sh
getent hosts "$(hostname)" > /dev/null || export PTXBENCH_SCHEDULER_HOST=127.0.0.1
if [[ ${PTXB_SLURM_REAL_WORKER:-0} == 1 ]]; then
  export PTXBENCH_WORKER_ARGS="--slots 2 --timed-calls 10 --warmup-calls 2"
  # The quickstart's scripted model, its answers named by absolute path: the
  # jobs run in their own folder.
  printf '{"models": {"quickstart-scripted": {"provider": "scripted", "answers_dir": "%s"}}}\n' \
    "$repo/examples/quickstart/answers" > "$tmp/models.json"
  export PTXBENCH_GATEWAY_ARGS="--models $tmp/models.json"
  # Four evaluations on the GPU: turn 0's kernel is wrong, turn 1's correct,
  # so each of the two trajectories ends with a correct kernel.
  spec=$tmp/spec.json timeout_s=300 want_correct=2
  cat > "$spec" <<'JSON'
{"name": "slurm-recipe-gpu", "models": ["quickstart-scripted"], "definitions": ["gemm_n7168_k5120"],
 "prompt_tags": ["ptxb-no-hint"], "samples": 2, "num_turns": 2, "target_speedup": 1.0}
JSON
  sed 's/"slurm-recipe-gpu"/"slurm-busy"/' "$spec" > "$tmp/busy.json"
else
  # A model call takes a second, so that at the scancel a gateway is still
  # in one when the scheduler gets its SIGTERM (at 10 ms the executors could
  # report everything first, and the scheduler found no lease to wait for).
  export PTXBENCH_WORKER_ARGS="--simulate --latency-ms 20" PTXBENCH_GATEWAY_ARGS="--simulate --latency-ms 1000"
  spec=$tmp/spec.json timeout_s=90 want_correct=
  cat > "$spec" <<'JSON'
{"name": "slurm-recipe", "models": ["sim-model-a"], "definitions": ["gemm_n7168_k5120"],
 "prompt_tags": ["ptxb-no-hint", "ptxb-basic"], "samples": 2, "num_turns": 3, "target_speedup": 1.0}
JSON
  # Enough that work is still held when scancel comes.
  sed 's/"slurm-recipe"/"slurm-busy"/; s/"samples": 2/"samples": 500/' "$spec" > "$tmp/busy.json"
fi
submit_job() {  # sbatch with the test's options; prints the job id
  sbatch --parsable --exclusive=user -o "$tmp/job-%j.out" -D "$tmp" "$@" "$repo/deploy/slurm/ptxbench.sbatch"
}
job=$(submit_job -J ptxbench-test) || fail "sbatch refused the recipe"
wait_until "[[ -s $tmp/run/scheduler.env ]]" 60 || fail "job $job: no scheduler.env after 60 s"
# shellcheck disable=SC1091 # written by the job
source "$tmp/run/scheduler.env"
echo "job $job: scheduler at $PTXBENCH_SCHEDULER after $(elapsed)"
join=$(PTXBENCH_JOIN=$tmp/run PTXBENCH_WORKERS=none PTXBENCH_GATEWAYS=per-node \
       PTXBENCH_RUN_DIR='' submit_job -J ptxbench-test-gateways) || fail "sbatch refused the joining job"

ptxb() {
  "$cli" --scheduler "$PTXBENCH_SCHEDULER" --tls-ca "$PTXBENCH_TLS_CA" \
    --token-file "$PTXBENCH_ADMIN_TOKEN_FILE" "$@"
}
# Exactly these executors, named slurm-JOB.STEP-NODE: a worker and a gateway
# from the recipe's job, a gateway from the joining one. The scheduler is new,
# so whatever work is done, Slurm's steps did it.
executors() {
  ptxb workers --output json | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = d["executors"] if isinstance(d, dict) else d
for e in rows: print(e.get("kind", "?"), e.get("name", "?"))'
}
expected="worker slurm-$job.[0-9]+-$node
gateway slurm-$job.[0-9]+-$node
gateway slurm-$join.[0-9]+-$node"
registered() {
  local list
  list=$(executors) || return 1
  [[ $(wc -l <<< "$list") == $(wc -l <<< "$expected") ]] || return 1
  while read -r kind name; do
    grep -q -E "^$kind $name\$" <<< "$list" || return 1
  done <<< "$expected"
}
wait_until registered 60 ||
  fail "executors from Slurm steps did not register; they are: $(executors 2>&1)"
echo "executors registered after $(elapsed):"
executors | sed 's/^/  /'

exp=$(ptxb submit "$spec" | tail -1)
[[ $exp == exp_* ]] || fail "submit printed no experiment id: $exp"
deadline=$(( $(date +%s) + timeout_s ))
while :; do
  counts=$(ptxb status "$exp" --output json | python3 -c '
import json, sys
t = json.load(sys.stdin)["trajectories"]
print(t["terminal"], t["total"])') || fail "status of $exp failed"
  read -r ended total <<< "$counts"
  echo "  $(elapsed): $ended of $total trajectories ended"
  (( total > 0 && ended == total )) && break
  (( $(date +%s) < deadline )) || fail "$exp did not finish in $timeout_s s"
  sleep 2
done
ptxb status "$exp"
# Ended as experiments end (target met or turns used up), none for a failure.
failed=$(ptxb status "$exp" --output json | python3 -c '
import json, sys
print(json.load(sys.stdin)["trajectories"]["by_state"].get("FAILED", 0))')
[[ $failed == 0 ]] || fail "$failed trajectories FAILED: $(ptxb list "$exp" --state FAILED 2>&1)"
if [[ -n $want_correct ]]; then
  correct=$(ptxb status "$exp" --output json | python3 -c '
import json, sys
print(json.load(sys.stdin)["correct"])')
  [[ $correct == "$want_correct" ]] ||
    fail "$correct trajectories with a correct kernel, not $want_correct: $(ptxb list "$exp" 2>&1)"
fi

# scancel while work is held: Slurm sends SIGTERM to every step, the
# scheduler's included; the executors drain and the scheduler takes their
# reports before it closes (--report-grace-s), so nothing is left leased to a
# process that is gone. Both jobs end (the joining one with the job it joined).
busy=$(ptxb submit "$tmp/busy.json" | tail -1)
[[ $busy == exp_* ]] || fail "submit printed no experiment id: $busy"
held() {
  ptxb status "$busy" --output json | python3 -c '
import json, sys
print(json.load(sys.stdin)["tasks"]["leased"])'
}
wait_until '(( $(held) > 0 ))' 60 || fail "nothing of $busy was leased within 60 s"
scancel "$job" "$join"
wait_until "[[ -z \$(squeue -h -j $job,$join) ]]" 45 || fail "jobs still running 45 s after scancel"
state=$(scontrol show job "$job" | grep -o 'JobState=[A-Z_]*')
[[ $state == JobState=CANCELLED ]] || fail "job $job ended with $state, not CANCELLED"
# shellcheck disable=SC2009 # pgrep cannot match a fixed string in arguments
left=$(ps -eo pid=,args= | grep -F -e "$tmp/run/" | grep -v -e grep -e "$0")
[[ -z $left ]] || fail "processes of the jobs left after scancel:
$left"
for log in "$tmp"/run/logs/*/{worker,gateway}-*.log; do
  grep -q 'signal=Terminated' "$log" || fail "$log: no SIGTERM received"
done
scheduler_log=$tmp/run/logs/$job/scheduler.log
grep -q 'msg="waiting for the reports of leases held"' "$scheduler_log" ||
  fail "no lease was held at the scancel: $(tail -5 "$scheduler_log")"
grep -q 'msg="no lease held"' "$scheduler_log" ||
  fail "the scheduler closed with leases held: $(tail -5 "$scheduler_log")"
echo "the scheduler took the reports of $(grep -o -m1 'held=[0-9]*' "$scheduler_log" |
  cut -d= -f2) leases held at the scancel before it closed"
echo "PASS: scancel stopped every executor; $(elapsed) in all"
