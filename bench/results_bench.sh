#!/usr/bin/env bash
# results_bench.sh [BUILD_DIR]: how fast reports and exports read a large
# experiment, against a real scheduler and the real CLI.
#
# Writes a database of TRAJECTORIES (default 100000) x TURNS (default 10)
# synthetic results (bench/results_db; or copies DB=FILE, one it wrote
# before), starts ptxbench-scheduler on it, then
# prints: the report's wall time (median of 3, grouped by model and by tag),
# and for each export format given in FORMATS (default "csv jsonl") its wall
# time, turns/s, workload rows/s and the peak RSS of the CLI and of the
# scheduler. Peak RSS comes from getrusage of the finished CLI and from
# VmHWM of the scheduler.
set -euo pipefail
build=$(realpath "${1:-build}")
trajectories=${TRAJECTORIES:-100000}
turns=${TURNS:-10}
formats=${FORMATS:-csv jsonl}
source "$(dirname "$0")/synthetic_scheduler.sh"

# Runs a command; prints "<wall seconds> <peak RSS MiB>".
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
wall = time.monotonic() - start
print(f"{wall:.3f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}")
PY
}
scheduler_hwm() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$scheduler_pid/status"; }

echo "experiment: $trajectories trajectories x $turns turns = $((trajectories * turns)) turns"
walls=()
for _ in 1 2 3; do
  read -r wall _ < <(measure "${cli[@]}" report bench-results --by model --by tag)
  walls+=("$wall")
done
median=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n 2p)
echo "report (--by model --by tag): median ${median} s of ${walls[*]}"

for format in $formats; do
  rm -rf "$work/out"
  read -r wall rss < <(measure "${cli[@]}" export bench-results --format "$format" --out "$work/out")
  rows=$((trajectories * turns))
  workload_rows=$(($(wc -l < "$work/out/workloads.$format") - 1))
  [ "$format" = jsonl ] && workload_rows=$((workload_rows + 1))
  python3 - "$format" "$wall" "$rss" "$rows" "$workload_rows" "$(scheduler_hwm)" <<'PY'
import sys
fmt, wall, rss, rows, wrows, hwm = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
print(f"export {fmt}: {wall:.1f} s, {rows / wall:,.0f} turns/s, {wrows / wall:,.0f} workload rows/s, "
      f"CLI peak RSS {rss} MiB, scheduler peak RSS {hwm} MiB")
PY
done
