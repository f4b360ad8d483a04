#!/usr/bin/env bash
# status_bench.sh [BUILD_DIR]: how long `ptxbench status EXP` takes, as a
# whole CLI process against a real scheduler, on an experiment of
# TRAJECTORIES (default 1000000) x TURNS (default 1) synthetic results
# (bench/results_db; or DB=FILE, one it wrote before). Prints p50, p95 and
# p99 of CALLS (default 200) calls, then the same for `ptxbench --help`
# (the CLI's own start) and, for comparison, the time of the scans status
# made before the counters (issue 31), run by sqlite3 on the same file.
set -euo pipefail
build=$(realpath "${1:-build}")
trajectories=${TRAJECTORIES:-1000000}
turns=${TURNS:-1}
calls=${CALLS:-200}
source "$(dirname "$0")/synthetic_scheduler.sh"

# Wall times in ms of CALLS runs of a command: "p50 p95 p99".
percentiles() {
  python3 - "$calls" "$@" <<'PY'
import subprocess, sys, time
calls, argv = int(sys.argv[1]), sys.argv[2:]
walls = []
for _ in range(calls):
    start = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    walls.append((time.monotonic() - start) * 1000)
walls.sort()
pick = lambda q: walls[min(len(walls) - 1, int(q * len(walls)))]
print(f"p50 {pick(0.5):.1f} ms, p95 {pick(0.95):.1f} ms, p99 {pick(0.99):.1f} ms")
PY
}

echo "experiment: $trajectories trajectories x $turns turns"
echo "ptxbench status bench-results ($calls calls): $(percentiles "${cli[@]}" status bench-results)"
echo "ptxbench --help ($calls calls): $(percentiles "$build/cli/ptxbench" --help)"
before=$(sqlite3 "$work/data/ptxbench.db" <<'SQL' | grep -o 'real [0-9.]*' | awk '{s += $2} END {printf "%.1f", s * 1000}'
.timer on
SELECT state, failure_class, count(*), sum(turns_completed), sum(correct), max(simulated)
  FROM trajectories WHERE experiment = 1 GROUP BY state, failure_class;
SELECT state, kind, count(*) FROM tasks WHERE experiment = 1 AND state IN (0, 1)
  GROUP BY state, kind;
SQL
)
echo "the scans status made before the counters, by sqlite3: ${before} ms"
