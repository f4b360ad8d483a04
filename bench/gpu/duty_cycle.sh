#!/usr/bin/env bash
# Developer tool, run on the GPU machine from the repository root with
# .device-gpu/ carried (scripts/device/pack.sh): the GPU duty cycle of one
# real worker with a queue of evaluations. A scheduler, the worker (default
# slots: two per GPU) and a gateway answering with the quickstart's scripted
# kernels run SAMPLES x 2 turns (default 8); when the queue is empty the
# worker's /metrics page is read and its GPU lines are written to
# $OUT/duty_cycle.txt with the run's wall time. KERNEL=FILE (a kernel of
# gemm_n7168_k5120) makes the scripted model answer every turn with it instead,
# for a queue of fast kernels (worker/testdata/tvm_ffi/tma_gemm.cu, ~3 ms at
# M=8192 against the quickstart's ~100) whose evaluations are mostly fixed costs.
set -euo pipefail
source "$(dirname "$0")/../../scripts/device/env.sh"
bin="$root/.device-gpu"
samples="${SAMPLES:-8}"
work="$(mktemp -d)"
models=examples/quickstart/models.json
if [ -n "${KERNEL:-}" ]; then
  mkdir -p "$work/answers/gemm_n7168_k5120"
  cp "$KERNEL" "$work/answers/gemm_n7168_k5120/answer.cu"
  echo "{\"models\": {\"quickstart-scripted\": {\"provider\": \"scripted\",
    \"answers_dir\": \"$work/answers\"}}}" > "$work/models.json"
  models="$work/models.json"
fi
status_port=19464
pids=()
# A bench: nothing to save at the end, so no graceful stop.
trap 'kill -9 "${pids[@]}" 2>/dev/null || true' EXIT

"$bin/ptxbench-scheduler" --listen 127.0.0.1:0 --data-dir "$work/data" > "$work/scheduler.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/data/scheduler.addr" ] && break; sleep 0.1; done
addr="$(cat "$work/data/scheduler.addr")"
token="$work/data/admin.token"
"$bin/ptxbench-worker" --scheduler "$addr" --token-file "$token" --cache-dir "$work/cache" \
  --status-listen "$status_port" --stats-interval-s 30 > "$work/worker.log" 2>&1 &
pids+=($!)
"$bin/ptxbench-gateway" --scheduler "$addr" --token-file "$token" \
  --models "$models" --serve quickstart-scripted > "$work/gateway.log" 2>&1 &
pids+=($!)

cat > "$work/spec.json" <<EOF
{"name": "duty-cycle", "models": ["quickstart-scripted"], "definitions": ["gemm_n7168_k5120"],
 "prompt_tags": ["ptxb-no-hint"], "samples": $samples, "num_turns": 2, "target_speedup": 1000.0}
EOF
cli=("$bin/ptxbench" --scheduler "$addr" --data-dir "$work/data")
start=$(date +%s)
exp="$("${cli[@]}" submit "$work/spec.json" --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)["experiment"])')"
while true; do
  done_n="$("${cli[@]}" status "$exp" --output json | python3 -c 'import json,sys; t=json.load(sys.stdin)["trajectories"]; print(t["terminal"], t["total"])')"
  read -r terminal total <<< "$done_n"
  echo "$(date +%T) $terminal/$total trajectories finished"
  [ "$terminal" = "$total" ] && break
  sleep 5
done
wall=$(( $(date +%s) - start ))
metrics="$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$status_port/metrics').read().decode())")"
{
  echo "samples=$samples turns=2 evaluations=$((samples * 2)) wall_s=$wall"
  grep -E '^ptxbench_worker_(gpu_|evaluations_total\{status="(PASSED|INCORRECT_NUMERICAL)"|compile_seconds_(sum|count))' <<< "$metrics"
  grep 'msg=stats' "$work/worker.log" | tail -3
  grep -E 'msg=starting' "$work/worker.log" | head -1
} | tee "$out/duty_cycle.txt"
