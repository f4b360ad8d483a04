#!/usr/bin/env bash
# Checks the units with `systemd-analyze verify`, with their ExecStart
# binaries pointed at a build (verify insists that they exist):
#   deploy/systemd/verify.sh BUILD_DIR
# Exit 0 when every unit verifies with no finding; 77 (skip) when
# systemd-analyze is not installed.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-analyze is not installed: the units are not checked"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for unit in "$here"/*.service; do
  name=$(basename "$unit")
  sed -e "s|/usr/local/bin/ptxbench-scheduler|$build/scheduler/ptxbench-scheduler|" \
      -e "s|/usr/local/bin/ptxbench-worker|$build/worker/ptxbench-worker|" \
      -e "s|/usr/local/bin/ptxbench-gateway|$build/agent_gateway/ptxbench-gateway|" \
      "$unit" > "$work/$name"
  if ! grep -q "^ExecStart=$build/" "$work/$name"; then
    echo "$name: its ExecStart names no ptxbench binary"
    status=1
    continue
  fi
  # Any output is a finding (verify reports some problems only as warnings).
  findings=$(cd "$work" && systemd-analyze verify "./$name" 2>&1 || echo "(exit $?)")
  if [[ -n $findings ]]; then
    echo "$name:"
    echo "$findings"
    status=1
  else
    echo "$name: verified"
  fi
done
exit $status
