#!/usr/bin/env bash
# Developer tool, run on the GPU machine after pack.sh (same environment as
# gpu_suite.sh): the measurement figures of bench/gpu/NOTES.md into
# $OUT/measure.txt.
#  harness, cupti, ncu_times: the reference of every definition at every workload, three ways: the
#     evaluation's method (harness bracket), CUPTI in one process (the method
#     before the harness split), and ncu's gpu__time_duration
#     (NCU_DEFINITIONS="a b" limits ncu_times to those definitions).
#  cv: the harness's figure for cuBLAS at M=8192, 10 runs: CV across runs.
#  cost: one evaluation of the simple GEMM (COST_KERNEL: another kernel of
#     gemm_n7168_k5120) over all five workloads: wall time, and where it goes
#     (the harness's progress lines).
set -uo pipefail
source "$(dirname "$0")/env.sh"
bin="$root/.device-gpu"
bench="$bin/reference_timing_bench"
cv() {
  echo "## 2. harness, cuBLAS M=8192, 10 runs"
  "$bench" --method harness --definitions gemm_n7168_k5120 \
    --workload 242ddd1a-ee21-5a9c-b2f7-9867cc517890 --repeats 10 2>/dev/null
}
cost() {
  local kernel="${COST_KERNEL:-worker/testdata/gemm/correct.cu}"
  echo "## 3. one evaluation of $kernel, all five workloads"
  start=$(date +%s%N)
  "$bin/ptxbench" eval "$kernel" --definition gemm_n7168_k5120 --local \
    --json > "$out/eval_gemm.json" 2> "$out/eval_gemm.err"
  echo "rc=$? wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))"
  grep -E 'ptxbench-runner: \[' "$out/eval_gemm.err" | cut -c1-120
  python3 - "$out/eval_gemm.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
print("status", e["status"])
for t in e["traces"]:
    p = t["evaluation"]["performance"] or {}
    print(t["workload"]["axes"], t["evaluation"]["status"], p)
PY
}
harness() {
  echo "## 1a. harness (the evaluation's method)"
  "$bench" --method harness 2>"$out/harness_logs.txt"
}
cupti() {
  echo "## 1b. CUPTI in one process"
  "$bench" --method cupti
}
ncu_times() {
  echo "## 1c. ncu gpu__time_duration (sum of the reference's kernels per call)"
  for def in ${NCU_DEFINITIONS:-gemm_n7168_k5120 mha_with_lse_d128 mha_with_lse_d128_causal \
             mha_bwd_d128 mha_bwd_d128_causal}; do
    ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      "$bench" --method ncu --definitions "$def" --ncu_calls 5 > "$out/ncu_$def.csv" 2>&1
    python3 - "$out/ncu_$def.csv" "$def" <<'PY'
import csv, io, sys
path, name = sys.argv[1], sys.argv[2]
text = open(path).read()
# The program's "== definition axes" lines come first, then ncu's CSV rows.
workloads = [l[3:].strip() for l in text.splitlines() if l.startswith("== ")]
rows = [r for r in csv.reader(io.StringIO("\n".join(
    l for l in text.splitlines() if l.startswith('"')))) if r]
header, rows = rows[0], rows[1:]
kernel = header.index("Kernel Name"); value = header.index("Metric Value")
ours = ("StandardNormal", "NaNKernel", "GateKernel", "Compare", "ChangedBytes", "Spin", "ReadScratch")
# A backward definition's forward pass makes its saved statistics while the
# inputs are prepared, outside the timed call.
if "bwd" in name:
    ours += ("fprop",)
ns = [float(r[value].replace(",", "")) for r in rows if not any(o in r[kernel] for o in ours)]
unit = rows[0][header.index("Metric Unit")] if rows else "ns"
scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0}.get(unit, 1e-6)
per = len(ns) // max(len(workloads), 1)
for i, w in enumerate(workloads):
    total = sum(ns[i * per:(i + 1) * per]) * scale / 5
    print(f"| {name} | {w} | ncu {total:.4f} ms ({per // 5} kernels per call) |")
PY
  done
}
for section in ${SECTIONS:-cv cost harness cupti ncu_times}; do
  echo "### $section ($(date -u +%T))"
  "$section"
done > "$out/measure.txt" 2>&1
cat "$out/measure.txt"
