#!/usr/bin/env bash
# Developer tool, run on the GPU machine from the repository root with
# .device-gpu/ carried (scripts/device/pack.sh): the sandbox and trust
# boundary on a real GPU — the runner's self-test, the adversarial suite and
# the evaluation suite — into one log ($OUT/security.txt) and a summary.
set -uo pipefail
source "$(dirname "$0")/env.sh"
bin="$root/.device-gpu"
log="$out/security.txt"
: > "$log"
run() {  # name timeout args...
  local name=$1 limit=$2
  shift 2
  local start=$(date +%s)
  echo "===== $name $*" >> "$log"
  timeout "$limit" "$bin/$name" "$@" >> "$log" 2>&1
  local rc=$?
  echo "| $name $* | rc=$rc $(grep -E '^\[  (PASSED|FAILED) ' "$log" | tail -2 | tr '\n' ' ') | $(( $(date +%s) - start )) s |" >> "$out/summary.md"
}
echo "| run | result | time |" > "$out/summary.md"
echo "|---|---|---|" >> "$out/summary.md"
run ptxbench-runner 60 --health
run adversarial_gpu_test ${ADV_TIMEOUT:-300} ${ADV_ARGS:-}
run worker_gpu_eval_gpu_test ${EVAL_TIMEOUT:-300} ${EVAL_ARGS:-}
cat "$out/summary.md"
grep -E "^\[  FAILED  \]|Failure|error:|protection|missing:" "$log" | head -80
