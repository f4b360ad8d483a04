#!/usr/bin/env bash
# Refreshes docs/images/report.png, the README's picture of the HTML report:
# the screenshot that the end-to-end test (tests/results_e2e_test.cc) takes in
# headless Chromium of the report of two simulated experiments it ran, kept
# through PTXB_E2E_SCREENSHOT_OUT. Needs a configured build folder
# (scripts/setup.sh) and the Debian package chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${PTXB_BUILD_DIR:-build}
out=docs/images/report.png
cmake --build "$build_dir" --target results_e2e_test
tmp=$(mktemp --suffix=.png)
trap 'rm -f "$tmp"' EXIT
PTXB_E2E_SCREENSHOT_OUT="$tmp" "$build_dir/tests/results_e2e_test" --gtest_brief=1
# A skipped test (no chromium) writes nothing: keep the old picture.
if [ ! -s "$tmp" ]; then
  echo "report_screenshot: no screenshot was taken (is chromium installed?)" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
cp "$tmp" "$out"
echo "report_screenshot: $out ($(stat -c %s "$out") bytes)"
