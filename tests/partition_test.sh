#!/usr/bin/env bash
# A network partition between the scheduler and a worker node, on one
# machine (docs/ARCHITECTURE.md, "Leasing and recovery"):
#
#   tests/partition_test.sh BUILD_DIR
#
# The scheduler (with a simulated gateway) and two workers, node1 and node2,
# each run in a network namespace of their own, joined by veth pairs, over
# TLS. Once node1 holds leases, its link is cut: the scheduler's end of its
# veth goes down, so packets are dropped both ways and node1's calls hang
# (no reset, no error: the harder case for an executor). Its leases expire
# and node2 finishes those tasks; then the link comes back, node1's late
# reports are refused and change nothing, and node1 takes work again.
# tests/partition_check.py then checks the database: no turn lost or doubled.
#
# Exit 77 (skip) where network namespaces cannot be made (not root, no ip).
# PTXB_PARTITION_REAL_WORKER=1 runs node2 as a real worker on scripted
# kernels: full evaluation where nvidia-smi sees a GPU, else compile-only.
# PTXB_PARTITION_KEEP=1 keeps the work folder (logs, database).
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)

skip() { echo "network_partition: skipped: $*"; exit 77; }
[[ $(id -u) == 0 ]] || skip "network namespaces need root"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
# Called in polls: the system's python3 where there is one (a version
# manager's shim costs a second a call).
py=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 is not installed"

# Names carry this shell's pid, so two runs never share a namespace.
tag=ptxb-$$
sched=$tag-sched n1=$tag-n1 n2=$tag-n2
work=$(mktemp -d /tmp/ptxb_partition.XXXXXX)
data=$work/data
pids=()
namespaces=()
failed=1

cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 0.3
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  # Deleting a namespace destroys the veth ends inside it.
  local ns
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  if ((failed)); then
    echo "---- diagnostics (work folder $work)"
    for log in "$work"/*.log; do
      [[ -f $log ]] && { echo "---- tail of $(basename "$log")"; tail -n 25 "$log"; }
    done
    [[ -f $data/ptxbench.db ]] && "$py" "$src/tests/partition_check.py" events "$data/ptxbench.db" \
      2>&1 | tail -n 40
  fi
  if ((failed)) || [[ ${PTXB_PARTITION_KEEP:-} == 1 ]]; then
    echo "work folder kept: $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# fd 3 is the test's stdout, also where a polled check's output is silenced.
exec 3>&1
fail() { echo "network_partition: FAILED: $*" >&3; exit 1; }
say() { echo "[$(date +%T.%3N)] $*"; }

# A binary of a build tree, or of a packed folder (scripts/device/pack.sh).
binary() {
  local p
  for p in "$build/$1" "$build/${1##*/}"; do [[ -x $p ]] && { echo "$p"; return; }; done
  fail "no $1 under $build"
}
scheduler_bin=$(binary scheduler/ptxbench-scheduler)
worker_bin=$(binary worker/ptxbench-worker)
gateway_bin=$(binary agent_gateway/ptxbench-gateway)
cli_bin=$(binary cli/ptxbench)

# --- the network: sched <-> n1 and sched <-> n2, a /30 each.
ip netns add "$sched" 2>/dev/null || skip "ip netns add is not permitted here"
namespaces+=("$sched")
for ns in "$n1" "$n2"; do ip netns add "$ns"; namespaces+=("$ns"); done
ip -n "$sched" link add name to-n1 type veth peer name to-sched netns "$n1"
ip -n "$sched" link add name to-n2 type veth peer name to-sched netns "$n2"
ip -n "$sched" addr add 10.231.1.1/30 dev to-n1
ip -n "$sched" addr add 10.231.2.1/30 dev to-n2
ip -n "$n1" addr add 10.231.1.2/30 dev to-sched
ip -n "$n2" addr add 10.231.2.2/30 dev to-sched
for ns in "$sched" "$n1" "$n2"; do ip -n "$ns" link set lo up; done
ip -n "$sched" link set to-n1 up
ip -n "$sched" link set to-n2 up
ip -n "$n1" link set to-sched up
ip -n "$n2" link set to-sched up

# TLS, as any scheduler serving beyond loopback must (docs/SECURITY.md); the
# certificate names the addresses the nodes dial.
"$src/scripts/make_certs.sh" "$work/tls" 10.231.1.1 10.231.2.1 >/dev/null
tls=(--tls-ca "$work/tls/ca.pem")

# Runs a daemon in a namespace, in the background, logging to NAME.log.
spawn() {  # NS NAME COMMAND...
  local ns=$1 name=$2
  shift 2
  ip netns exec "$ns" "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
}
cli() { ip netns exec "$sched" "$cli_bin" --scheduler 127.0.0.1:50051 --data-dir "$data" \
  "${tls[@]}" "$@"; }
wait_until() {  # SECONDS WHAT COMMAND...: polls COMMAND, quietly, every 0.1 s
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      "$@" || true  # once more, saying why not
      fail "after ${seconds}s: $what"
    fi
    sleep 0.1
  done
}

real=${PTXB_PARTITION_REAL_WORKER:-0}
eval_mode=full
# A real GPU evaluation takes seconds, not a simulated 100 ms: a smaller
# first experiment, and longer waits for what node2 evaluates.
samples=6 turns=4 long=60
[[ $real == 1 ]] && samples=3 turns=2 long=300
if [[ $real == 1 ]] && ! nvidia-smi -L >/dev/null 2>&1; then eval_mode=compile-only; fi

# --- the cluster. Short leases so that the test takes seconds.
spawn "$sched" scheduler "$scheduler_bin" --listen 0.0.0.0:50051 --data-dir "$data" \
  --tls-cert "$work/tls/server.pem" --tls-key "$work/tls/server.key" \
  --lease-ttl-ms 3000 --heartbeat-ms 500 --backoff-base-ms 200
wait_until 30 "the scheduler serves" test -s "$data/scheduler.addr"
token=(--token-file "$data/admin.token")
gateway_flags=(--simulate --latency-ms 20)
if [[ $real == 1 ]]; then
  mkdir -p "$work/answers/gemm_n7168_k5120"
  cp "$src/worker/testdata/gemm/correct.cu" "$work/answers/gemm_n7168_k5120/answer.cu"
  gateway_flags+=(--answers-dir "$work/answers")
fi
spawn "$sched" gateway "$gateway_bin" --scheduler 127.0.0.1:50051 "${token[@]}" "${tls[@]}" \
  "${gateway_flags[@]}"
# node1 is slow, so that it holds leases when the link is cut, and its
# evaluations end while the partition lasts: their reports then wait to go.
spawn "$n1" node1 "$worker_bin" --scheduler 10.231.1.1:50051 "${token[@]}" "${tls[@]}" \
  --name node1 --simulate --latency-ms 2000 --slots 2
if [[ $real == 1 ]]; then
  spawn "$n2" node2 "$worker_bin" --scheduler 10.231.2.1:50051 "${token[@]}" "${tls[@]}" \
    --name node2 --slots 2 --cache-dir "$work/build-cache" --timed-calls 10 --warmup-calls 2
else
  spawn "$n2" node2 "$worker_bin" --scheduler 10.231.2.1:50051 "${token[@]}" "${tls[@]}" \
    --name node2 --simulate --latency-ms 100 --slots 2
fi

executors() { cli --output json workers 2>/dev/null; }
# The ids of the executors named NAME (one, unless it registered anew).
ids_of() { executors | "$py" -c 'import json,sys
print(" ".join(e["executor"] for e in json.load(sys.stdin)["executors"] if e["name"] == sys.argv[1]))' "$1"; }
leases_of() { executors | "$py" -c 'import json,sys
print(sum(e["leases"] for e in json.load(sys.stdin)["executors"] if e["name"] == sys.argv[1]))' "$1"; }
alive() {
  local pid
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a daemon exited (pid $pid)"; done
}
registered() { alive; [[ -n $(ids_of node1) && -n $(ids_of node2) && -n $(ids_of gateway) ]]; }
wait_until 60 "node1, node2 and the gateway register" registered
node1=$(ids_of node1) node2=$(ids_of node2)
say "registered: node1 $node1, node2 $node2"

submit() {  # NAME SAMPLES TURNS: prints the experiment id
  local spec=$work/$1.json definitions='"gemm_n7168_k5120", "mha_with_lse_d128"'
  [[ $real == 1 ]] && definitions='"gemm_n7168_k5120"'
  # A target no kernel meets: every trajectory runs all its turns.
  cat >"$spec" <<EOF
{"name": "$1", "models": ["sim-model-a"], "definitions": [$definitions],
 "prompt_tags": ["ptxb-no-hint"], "samples": $2, "num_turns": $3,
 "target_speedup": 1000.0, "eval": "$eval_mode"}
EOF
  cli --output json submit "$spec" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["experiment"])'
}
finished() {  # EXP
  cli --output json status "$1" 2>/dev/null | "$py" -c 'import json,sys
t = json.load(sys.stdin)["trajectories"]; sys.exit(0 if t["total"] == t["terminal"] else 1)'
}
check() { "$py" "$src/tests/partition_check.py" "$@" "$data/ptxbench.db"; }

exp1=$(submit partition-$$ "$samples" "$turns")
say "submitted $exp1"

# --- the cut, once node1 holds leases (seen by the scheduler, through the CLI).
node1_holds() { (($(leases_of node1) > 0)); }
for attempt in 1 2 3; do
  wait_until 60 "node1 holds a lease" node1_holds
  ip -n "$sched" link set to-n1 down
  say "cut node1 off (ip link set to-n1 down in $sched)"
  # A report already in the scheduler's socket may still land: the leases
  # still held a moment later are the ones node1 can no longer report.
  sleep 0.5
  check cut-leases "$node1" "$work/cut.json" && break
  # node1 finished its tasks between the look and the cut: again.
  ((attempt < 3)) || fail "node1 held no lease at any of 3 cuts"
  ip -n "$sched" link set to-n1 up
done
say "node1 held at the cut: $("$py" -c 'import json,sys
print(*(t["task_id"] + " " + t["lease_id"] for t in json.load(open(sys.argv[1]))), sep=", ")' \
  "$work/cut.json")"

wait_until "$long" "node1's leases expire and node2 finishes their tasks" \
  check moved "$node1" "$node2" "$work/cut.json"
check snapshot "$work/cut.json" "$work/before_heal.json"
say "every task of node1 expired and was finished by node2; healing"

# --- heal: node1's late reports reach the scheduler and are refused.
ip -n "$sched" link set to-n1 up
refused() { check refused-in-log "$work/cut.json" "$work/node1.log" >/dev/null; }
wait_until 60 "node1 logs the refusal of its late reports" refused
wait_until $((2 * long)) "every trajectory of $exp1 ends" finished "$exp1"
check unchanged "$work/cut.json" "$work/before_heal.json"

# --- node1 rejoins: with node2 drained, only node1 can evaluate.
cli drain "$node2" >/dev/null
exp2=$(submit partition-rejoin-$$ 1 2)
wait_until 120 "every trajectory of $exp2 ends (on node1)" finished "$exp2"
check rejoined "$exp2" "$(ids_of node1)"
check consistent

echo "---- evidence"
check evidence "$work/cut.json" "$work/node1.log" "$work/node2.log"
failed=0
say "network_partition: passed"
