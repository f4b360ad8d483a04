# Sourced by the benchmarks that read a large experiment (results_bench.sh,
# status_bench.sh) with `build`, `trajectories` and `turns` set: a database
# of synthetic results (bench/results_db; or DB=FILE, one it wrote before) in
# a fresh directory, a ptxbench-scheduler on it, and `cli`, the CLI pointed
# at it, once the scheduler answers (its start-up integrity check of a
# million trajectories takes about 20 s). Everything goes at exit.
work=$(mktemp -d)
scheduler_pid=
cleanup() {
  [ -n "$scheduler_pid" ] && kill "$scheduler_pid" 2>/dev/null && wait "$scheduler_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/data"
if [ -n "${DB:-}" ]; then
  cp "$DB" "$work/data/ptxbench.db"
else
  echo "writing $trajectories x $turns synthetic results ..." >&2
  "$build/bench/results_db" --out "$work/data/ptxbench.db" --trajectories "$trajectories" \
    --turns "$turns" 2>/dev/null
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$build/scheduler/ptxbench-scheduler" --listen "127.0.0.1:$port" --data_dir "$work/data" \
  --max_trajectories 10000000 > "$work/scheduler.log" 2>&1 &
scheduler_pid=$!
cli=("$build/cli/ptxbench" --scheduler "127.0.0.1:$port" --data-dir "$work/data" --timeout 600)
for _ in $(seq 300); do "${cli[@]}" status bench-results > /dev/null 2>&1 && break; sleep 0.2; done
