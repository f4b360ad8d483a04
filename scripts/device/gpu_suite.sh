#!/usr/bin/env bash
# Developer tool, run on the GPU machine from the repository root with
# .device-gpu/ carried (scripts/device/pack.sh): runs every GPU test binary
# and writes their output and a summary table under $OUT (default ./out).
set -uo pipefail
root="$(pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
cudnn="$(python3 -c 'import nvidia.cudnn,os;print(os.path.dirname(nvidia.cudnn.__file__)+"/lib")' 2>/dev/null || true)"
export LD_LIBRARY_PATH="$root/.device-gpu:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${cudnn}"
export PTXBENCH_DATA_DIR="$root"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
echo "| test binary | result | seconds |" > "$out/summary.md"
echo "|---|---|---|" >> "$out/summary.md"
for t in "$root"/.device-gpu/*_test; do
  name="$(basename "$t")"
  start=$(date +%s)
  "$t" > "$out/$name.txt" 2>&1
  rc=$?
  line="$(grep -E '^\[  (PASSED|FAILED) ' "$out/$name.txt" | tr '\n' ' ')"
  echo "| $name | rc=$rc $line | $(( $(date +%s) - start )) |" >> "$out/summary.md"
done
cat "$out/summary.md"
