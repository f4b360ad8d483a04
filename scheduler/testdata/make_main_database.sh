#!/bin/bash
# Makes main-b7540e7.db: a scheduler database written by the scheduler of
# commit b7540e7, stopped (kill -9) part-way through a small experiment, so it
# holds finished, leased and queued work. main_database_test runs it to the
# end with the current code.
#
# Usage: make_main_database.sh BUILD_DIR_OF_b7540e7 OUT.db
set -euo pipefail
build=$1
out=$2
dir=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
addr=127.0.0.1:47613

"$build/scheduler/ptxbench-scheduler" --listen "$addr" --data-dir "$dir" \
  --lease-ttl-ms 60000 >"$dir/scheduler.log" 2>&1 &
sched=$!
for _ in $(seq 100); do
  "$build/cli/ptxbench" --scheduler "$addr" workers >/dev/null 2>&1 && break
  sleep 0.1
done
cat >"$dir/spec.json" <<'SPEC'
{"name": "main-fixture", "models": ["sim-model-a"], "definitions": ["gemm_n7168_k5120"],
 "prompt_tags": ["ptxb-no-hint", "ptxb-basic"], "samples": 4, "num_turns": 3,
 "target_speedup": 1.0}
SPEC
"$build/cli/ptxbench" --scheduler "$addr" submit "$dir/spec.json"
"$build/agent_gateway/ptxbench-gateway" --scheduler "$addr" --simulate --latency-ms 2500 \
  --slots 3 >"$dir/gateway.log" 2>&1 &
"$build/worker/ptxbench-worker" --scheduler "$addr" --simulate --latency-ms 300 \
  --slots 1 >"$dir/worker.log" 2>&1 &

# Stop once at least two trajectories finished while others still run.
# (ptxbench.v1.TrajectoryState and scheduler::TaskState values.)
AWAITING_MODEL=1 AWAITING_EVAL=2 LEASED=1
db="$dir/ptxbench.db"
for _ in $(seq 600); do
  sleep 0.2
  done_n=$(sqlite3 "$db" "SELECT count(*) FROM trajectories WHERE state NOT IN ($AWAITING_MODEL, $AWAITING_EVAL)" 2>/dev/null || echo 0)
  leased=$(sqlite3 "$db" "SELECT count(*) FROM tasks WHERE state = $LEASED" 2>/dev/null || echo 0)
  [ "$done_n" -ge 2 ] && [ "$leased" -ge 1 ] && break
done
kill -9 "$sched"
sleep 0.5
# Fold the WAL into the file (what the next open would do anyway); the file
# stays in WAL mode, as the scheduler left it.
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
cp "$db" "$out"
sqlite3 "$out" "SELECT 'trajectories', state, count(*) FROM trajectories GROUP BY state;
                SELECT 'tasks', state, count(*) FROM tasks GROUP BY state;"
