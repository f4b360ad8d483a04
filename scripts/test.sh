#!/usr/bin/env bash
# Set up, build, and run the whole test suite (GPU tests skip, saying so,
# on a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir "${PTXB_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
