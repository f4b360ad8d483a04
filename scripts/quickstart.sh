#!/usr/bin/env bash
# The main job: set up, build, then run a local experiment end to end on the
# embedded SQLite default (./.ptxbench): a scheduler, a real worker (on this
# machine's GPU, or compile-only without one, as the banner says) and a real
# gateway start as child processes; the quickstart experiment is submitted
# and watched until it finishes, then everything stops.
#
# The answers come from the scripted model (examples/quickstart/answers).
# PTXBENCH_MODEL=<registry model> runs the same experiment with that model
# instead (its API key variable must be set, e.g. OPENAI_API_KEY for gpt-4.1;
# `ptxbench-gateway --help` and agent_gateway/data/models.json list them).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
args=(up --data-dir .ptxbench --models examples/quickstart/models.json
      --submit examples/quickstart.json --exit-when-done)
if [[ -n "${PTXBENCH_MODEL:-}" ]]; then
  args+=(--model "$PTXBENCH_MODEL" --name "quickstart-${PTXBENCH_MODEL//[^A-Za-z0-9._-]/-}")
fi
exec "${PTXB_BUILD_DIR:-build}/cli/ptxbench" "${args[@]}" "$@"
