#!/usr/bin/env bash
# Developer tool, run on the GPU machine from the repository root with
# .device-gpu/ carried (scripts/device/pack.sh): runs every GPU test binary
# and writes their output and a summary table under $OUT (default ./out).
# TESTS="a_test b_test" picks binaries; GTEST_ARGS and TEST_TIMEOUT (s) are passed on.
set -uo pipefail
source "$(dirname "$0")/env.sh"
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
