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
# Tests that mostly wait (label "waits", cmake/warnings.cmake) run beside
# the rest, which keeps the cores; their output follows the rest's.
# Each writes a JUnit file with every test's whole output, from which the
# skips and their reasons are read (scripts/check_skips.py).
waits_log="$build_dir/ctest_waits.log"
junit=(--test-output-size-passed 262144 --test-output-size-failed 262144)
ctest --test-dir "$build_dir" --output-on-failure -L waits -j 3 "${junit[@]}" \
  --output-junit ctest_waits.xml "$@" > "$waits_log" 2>&1 &
waits=$!
ctest --test-dir "$build_dir" --output-on-failure -LE waits -j "$(nproc)" "${junit[@]}" \
  --output-junit ctest_rest.xml "$@" || status=$?
wait "$waits" || status=1
echo "== the tests that mostly wait (label waits)"
cat "$waits_log"
# A skip for a reason this kind of machine should never have fails the run
# (.ci/allowed_skips; PTXB_ALLOWED_SKIPS names another list).
echo "== skips"
python3 scripts/check_skips.py "${PTXB_ALLOWED_SKIPS:-.ci/allowed_skips}" \
  "$build_dir/ctest_rest.xml" "$build_dir/ctest_waits.xml" || status=1
if wait "$fuzz"; then
  echo "fuzz: every target ran clean ($(grep -c '^fuzz: .* for ' "$fuzz_log") targets)"
  grep -E "^Done|executed_units" "$fuzz_log" || true
else
  echo "fuzz: FAILED"
  cat "$fuzz_log"
  status=1
fi
exit $status
