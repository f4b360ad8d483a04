#!/usr/bin/env bash
# scripts/screenshot_from_test.sh TARGET ENV_VAR OUT: builds the test TARGET
# (tests/TARGET), runs it with ENV_VAR naming a file, and copies the
# screenshot it wrote there to OUT. The browser tests keep their pictures this
# way (report_screenshot.sh, dashboard_screenshot.sh). Needs a configured
# build folder (scripts/setup.sh; PTXB_BUILD_DIR, default build) and the
# Debian package chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$1 variable=$2 out=$3
build_dir=${PTXB_BUILD_DIR:-build}
cmake --build "$build_dir" --target "$target"
tmp=$(mktemp --suffix=.png)
trap 'rm -f "$tmp"' EXIT
env "$variable=$tmp" "$build_dir/tests/$target" --gtest_brief=1
# A skipped test (no chromium) writes nothing: keep the old picture.
if [ ! -s "$tmp" ]; then
  echo "$(basename "$out" .png) screenshot: none was taken (is chromium installed?)" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
cp "$tmp" "$out"
echo "screenshot: $out ($(stat -c %s "$out") bytes)"
