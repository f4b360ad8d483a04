#!/usr/bin/env bash
# Developer tool, run on the GPU machine from the repository root with
# .device-gpu/ carried (scripts/device/pack.sh): FlashInfer-Trace datasets
# and PyTorch references on a real GPU — the dataset tests (an RMSNorm with
# only a PyTorch reference, a weight from safetensors, a dataset's causal
# attention, the native references against the PyTorch ones), then the same
# RMSNorm through `ptxbench eval --local` and through `ptxbench up` with a
# scripted model. Logs and a summary under $OUT.
set -uo pipefail
source "$(dirname "$0")/env.sh"
bin="$root/.device-gpu"
python="$(command -v python3)"
export PTXBENCH_TEST_TORCH_PYTHON="$python"
echo "| step | result | time |" > "$out/dataset_summary.md"
echo "|---|---|---|" >> "$out/dataset_summary.md"
step() {  # name log timeout command...
  local name=$1 log=$2 limit=$3
  shift 3
  local start=$(date +%s)
  timeout "$limit" "$@" > "$out/$log" 2>&1
  local rc=$?
  local result="$(grep -E '^\[  (PASSED|FAILED) |^status|PASSED|FAILED' "$out/$log" | tail -2 | tr '\n' ' ' | cut -c1-160)"
  echo "| $name | rc=$rc $result | $(( $(date +%s) - start )) s |" >> "$out/dataset_summary.md"
}
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' \
  > "$out/torch.txt" 2>&1
step dataset_eval_gpu_test dataset_eval.txt 420 "$bin/dataset_eval_gpu_test"
step "eval --local rmsnorm" eval_rmsnorm.txt 180 "$bin/ptxbench" eval worker/testdata/rmsnorm/rmsnorm.cu \
  --definition rmsnorm_h4096 --dataset examples/flashinfer_trace --local --torch-python "$python"
data="$out/rmsnorm-data"
step "up: rmsnorm experiment" up_rmsnorm.txt 240 "$bin/ptxbench" up --data-dir "$data" \
  --listen 127.0.0.1:50572 --dataset examples/flashinfer_trace --torch-python "$python" \
  --models examples/rmsnorm/models.json --submit examples/rmsnorm.json --exit-when-done
"$bin/ptxbench" up --data-dir "$data" --listen 127.0.0.1:50572 --workers 0 --gateways 0 \
  --dataset examples/flashinfer_trace > "$out/up2.txt" 2>&1 &
up=$!
sleep 3
for t in $("$bin/ptxbench" --scheduler 127.0.0.1:50572 --data-dir "$data" list rmsnorm --output json |
           python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(x["trajectory"] for x in (d["trajectories"] if isinstance(d, dict) else d)))'); do
  "$bin/ptxbench" --scheduler 127.0.0.1:50572 --data-dir "$data" show "$t" >> "$out/up_rmsnorm.txt" 2>&1
done
kill -INT "$up"; wait "$up"
cat "$out/dataset_summary.md" "$out/torch.txt"
grep -E "^\[  FAILED  \]|error:|PyTorch .* ms; max abs" "$out/dataset_eval.txt" | head -40
