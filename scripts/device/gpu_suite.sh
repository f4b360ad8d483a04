#!/usr/bin/env bash
# Developer tool, run on the GPU machine from the repository root with
# .device-gpu/ carried (scripts/device/pack.sh): runs every GPU test binary
# and writes their output and a summary table under $OUT (default ./out).
# TESTS="a_test b_test" picks binaries; GTEST_ARGS and TEST_TIMEOUT (s) are passed on.
set -uo pipefail
root="$(pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
# cuDNN from the pip package (the one torch uses) where there is one.
cudnn="$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null || true)"
cuda=/usr/local/cuda
export LD_LIBRARY_PATH="$root/.device-gpu:$cuda/lib64:$cuda/extras/CUPTI/lib64:$cuda/targets/x86_64-linux/lib:${cudnn}"
export PTXBENCH_TEST_BIN_DIR="$root/.device-gpu"
export PTXBENCH_DATA_DIR="$root"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
echo "| test binary | result | seconds |" > "$out/summary.md"
echo "|---|---|---|" >> "$out/summary.md"
for name in ${TESTS:-$(cd "$root/.device-gpu" && ls -- *_test)}; do
  t="$root/.device-gpu/$name"
  start=$(date +%s)
  timeout "${TEST_TIMEOUT:-500}" "$t" ${GTEST_ARGS:-} > "$out/$name.txt" 2>&1
  rc=$?
  line="$(grep -E '^\[  (PASSED|FAILED) ' "$out/$name.txt" | tr '\n' ' ')"
  echo "| $name | rc=$rc $line | $(( $(date +%s) - start )) |" >> "$out/summary.md"
done
cat "$out/summary.md"
