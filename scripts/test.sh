#!/usr/bin/env bash
# Set up, build, and run the whole test suite (GPU tests skip, saying so,
# on a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# The fuzz targets (scripts/fuzz.sh) build and run beside the test suite.
build_dir=${PTXB_BUILD_DIR:-build}
fuzz_log="$build_dir/fuzz.log"
./scripts/fuzz.sh > "$fuzz_log" 2>&1 &
fuzz=$!
status=0
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@" || status=$?
if wait "$fuzz"; then
  echo "fuzz: every target ran clean ($(grep -c '^fuzz: .* for ' "$fuzz_log") targets)"
  grep -E "^Done|executed_units" "$fuzz_log" || true
else
  echo "fuzz: FAILED"
  cat "$fuzz_log"
  status=1
fi
exit $status
