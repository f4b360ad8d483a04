#!/usr/bin/env bash
# Developer tool, run on the GPU machine after gpu_suite.sh's setup (same
# environment): the measurement figures of issue 3 into $OUT/measure.txt.
#  1. cuBLAS GEMM at M=8192: median, TFLOP/s, spread over 10 repeats (CUPTI).
#  2. The same kernel under ncu (gpu__time_duration), to compare with 1.
#  3. One evaluation's wall time and its timed GPU work, build cache cold/warm.
set -uo pipefail
root="$(pwd)"
out="${OUT:-$root/out}"
bin="$root/.device-gpu"
{
  echo "## gemm_timing_bench --m 8192 --repeats 10"
  "$bin/gemm_timing_bench" --m 8192 --repeats 10
  echo "## ncu, 5 flushed launches at M=8192"
  ncu --clock-control none --metrics gpu__time_duration.sum "$bin/gemm_timing_bench" \
    --ncu_m 8192 --ncu_calls 5 2>&1 | grep -E "gpu__time_duration|^  [a-z_0-9]+.*\(|ncu mode"
  cache="$(mktemp -d)"
  for pass in cold warm; do
    echo "## ptxbench eval correct.cu, M=232 and M=8192, build cache $pass"
    start=$(date +%s%N)
    "$bin/ptxbench" eval worker/testdata/gemm/correct.cu \
      --definition gemm_n7168_k5120 --workload 6107c207-8a86-5a8e-a866-72bd92d4f8f7 \
      --workload 242ddd1a-ee21-5a9c-b2f7-9867cc517890 --cache-dir "$cache" --json \
      > "$out/eval_$pass.json"
    wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    python3 - "$out/eval_$pass.json" "$wall_ms" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
wall = int(sys.argv[2])  # the whole command: process start, build, runner, checks
timed = 0.0
for t in e["traces"]:
    # 3 trials x 60 calls each for the candidate and the reference
    p = t["evaluation"]["performance"] or {}
    timed += 3 * 60 * (p.get("latency_ms", 0) + p.get("reference_latency_ms", 0))
    print(t["workload"]["uuid"][:8], t["evaluation"]["status"], p)
print("status", e["status"], "wall_ms", wall, "timed GPU work ms (approx)", round(timed, 1),
      "share", round(timed / wall, 3) if wall else None)
PY
  done
} > "$out/measure.txt" 2>&1
cat "$out/measure.txt"
