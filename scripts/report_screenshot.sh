#!/usr/bin/env bash
# Refreshes docs/images/report.png, the picture of the HTML report: the
# screenshot that the browser test (report/browser_test.cc) takes of its page
# in headless Chromium, kept through PTXB_SCREENSHOT_OUT. Needs a configured
# build folder (scripts/setup.sh) and the Debian package chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${PTXB_BUILD_DIR:-build}
out=docs/images/report.png
cmake --build "$build_dir" --target report_browser_test
tmp=$(mktemp --suffix=.png)
trap 'rm -f "$tmp"' EXIT
PTXB_SCREENSHOT_OUT="$tmp" "$build_dir/report/report_browser_test" \
  --gtest_filter='ReportBrowserTest.*' --gtest_brief=1
# A skipped test (no chromium) writes nothing: keep the old picture.
if [ ! -s "$tmp" ]; then
  echo "report_screenshot: no screenshot was taken (is chromium installed?)" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
cp "$tmp" "$out"
echo "report_screenshot: $out ($(stat -c %s "$out") bytes)"
