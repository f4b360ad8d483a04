#!/usr/bin/env bash
# Refreshes docs/images/report.png, the README's picture of the HTML report:
# the screenshot that the end-to-end test (tests/results_e2e_test.cc) takes in
# headless Chromium of the report of two simulated experiments it ran, kept
# through PTXB_E2E_SCREENSHOT_OUT.
exec "$(dirname "$0")/screenshot_from_test.sh" results_e2e_test \
  PTXB_E2E_SCREENSHOT_OUT docs/images/report.png
