#!/usr/bin/env bash
# The main job: set up, build, then run a local experiment end to end on the
# embedded SQLite default (./.ptxbench): a scheduler, a worker and a gateway
# start as child processes, the quickstart experiment is submitted and
# watched until it finishes, then everything stops.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec "${PTXB_BUILD_DIR:-build}/cli/ptxbench" up --simulate --data-dir .ptxbench \
  --submit examples/quickstart.json --exit-when-done "$@"
