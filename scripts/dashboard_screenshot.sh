#!/usr/bin/env bash
# Refreshes docs/images/dashboard.png, the picture of the live dashboard in
# the README and docs/DASHBOARD.md: the screenshot that the browser test
# (tests/dashboard_browser_test.cc) takes in headless Chromium of the page of
# the simulated experiment it ran, kept through PTXB_DASHBOARD_SCREENSHOT.
exec "$(dirname "$0")/screenshot_from_test.sh" dashboard_browser_test \
  PTXB_DASHBOARD_SCREENSHOT docs/images/dashboard.png
