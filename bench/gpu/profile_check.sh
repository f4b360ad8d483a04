#!/usr/bin/env bash
# Developer tool, on the GPU machine from the repository root with
# .device-gpu/ carried (scripts/device/pack.sh): each bundled definition's
# simple test kernel and the TVM-FFI TMA GEMM (on the GPU tests' workloads)
# profiled two ways, for the
# check of the worker's profile summary (docs/MEASUREMENT.md, "Profiles"):
# by the worker (the GPU tests' profile cases print their summaries), and by
# Nsight Compute directly, with the same metrics, on one call of the same
# kernel outside every sandbox (direct_call), summarized by the same code.
# Writes $OUT/profile_check.md.
set -uo pipefail
source "$(dirname "$0")/../../scripts/device/env.sh"
bin="$root/.device-gpu"
report="$out/profile_check.md"
PTXB_KEEP_REPORTS="$out" "$bin/worker_gpu_eval_gpu_test" \
  --gtest_filter='*Profile*' > "$out/worker_profiles.txt" 2>&1
metrics="$("$bin/direct_call" --print_metrics)"
{
  echo "# Worker profiles (worker_gpu_eval_gpu_test)"
  grep -E "^(Profile|  [A-Za-z_]|    |wall|\[  (PASSED|FAILED))" "$out/worker_profiles.txt"
  echo
  echo "# Direct ncu runs (direct_call)"
} > "$report"
while read -r definition kernel workload; do
  name="$definition-$(basename "$kernel" .cu)"
  ncu --clock-control none --metrics "$metrics" --export "$out/$name.direct" --force-overwrite \
    "$bin/direct_call" --definition "$definition" --kernel "worker/testdata/$kernel" --workload "$workload" \
    > "$out/$name.direct.log" 2>&1
  ncu --import "$out/$name.direct.ncu-rep" --csv --page raw --print-units base > "$out/$name.direct.csv"
  { echo "== $name"; "$bin/direct_call" --summarize "$out/$name.direct.csv" 2>&1; } >> "$report"
done <<'LIST'
gemm_n7168_k5120 gemm/correct.cu 729b8d2e-8307-57e0-b6f5-d50957348534
gemm_n7168_k5120 tvm_ffi/tma_gemm.cu 729b8d2e-8307-57e0-b6f5-d50957348534
mha_with_lse_d128 attention/mha_with_lse_d128.cu b1925b19-c151-5d55-be56-d03303b7ae2c
mha_with_lse_d128_causal attention/mha_with_lse_d128_causal.cu 36ff68ec-a941-50dc-a29a-a477f26831de
mha_bwd_d128 attention/mha_bwd_d128.cu a7c1f029-8449-5918-86d6-c4aa45421654
mha_bwd_d128_causal attention/mha_bwd_d128_causal.cu e87fcc6a-48cc-54eb-9c79-43e6d9d5be96
LIST
cat "$report"
