#!/usr/bin/env bash
# Developer tool, on the GPU machine from the repository root with
# .device-gpu/ carried (scripts/device/pack.sh): the bundled Triton example end
# to end with `ptxbench up` and a real worker that runs Triton (--triton, on
# the PyTorch venv's Python), twice:
#   1. examples/quickstart_triton.json, the matrix spec with ptxbench's own
#      Triton prompt (ptxb-triton);
#   2. examples/ptxbench_triton.json, the PTXBench list config naming the
#      hub's triton-hopper tag, with --model quickstart-triton-scripted.
#      PTXBench's hub is not bundled: PTXBENCH_HUB=PATH/hub.json uses a real
#      one, else a stand-in hub of its layout is written under $OUT (the
#      scripted model answers the same whatever the prompt says).
# Each must end as the scripted answers tell: turn 0 (its grid rounds M down)
# INCORRECT, turn 1 (the fix) PASSED and timed. Before the first, the CUDA
# quickstart (examples/quickstart.json, the same definition) runs in the same
# database, and `ptxbench report quickstart quickstart-triton` compares the two
# languages side by side ($OUT/side_by_side.txt). Prints one line per run and
# "TRITON EXAMPLE: PASS" or "TRITON EXAMPLE: FAIL"; exit status 0 or 1.
# Logs and `show` of every trajectory under $OUT; each run is cut at 270 s,
# so the whole fits in one 10-minute device command.
#
#   scripts/device/triton_example.sh            (TORCH_PYTHON=... for another venv)
set -uo pipefail
source "$(dirname "$0")/env.sh"
bin="$root/.device-gpu"
python="${TORCH_PYTHON:-/opt/torch/.venv/bin/python3}"
"$python" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__,
              "cuda", torch.cuda.is_available())' > "$out/triton_versions.txt" 2>&1
cat "$out/triton_versions.txt"

hub="${PTXBENCH_HUB:-}"
if [ -z "$hub" ]; then
  hub="$out/ptxbench-hub/multiturn/prompts/hub.json"
  mkdir -p "$(dirname "$hub")" "$out/ptxbench-hub/multiturn/structural_doc/document"
  echo '{"triton-hopper": ["structural_doc/document/triton_knowledge_sm90_plus.md"]}' > "$hub"
  echo "Stand-in for PTXBench's triton_knowledge_sm90_plus.md (not bundled with ptxbench): write
Triton kernels for Hopper GPUs." > "$out/ptxbench-hub/multiturn/structural_doc/document/triton_knowledge_sm90_plus.md"
fi

verdict=PASS
# run NAME PORT up-arguments...: one experiment with `ptxbench up`, then its
# turns read from the database and `show` of its trajectories.
run() {
  local name=$1 port=$2
  shift 2
  local data="$out/$name-data" addr="127.0.0.1:$port" start=$(date +%s)
  timeout 270 "$bin/ptxbench" up --data-dir "$data" --listen "$addr" --torch-python "$python" \
    --triton --models examples/quickstart_triton/models.json "$@" --exit-when-done \
    > "$out/$name.txt" 2>&1
  local rc=$?
  # Turn by turn: "turn status speedup", status as EvalStatus numbers.
  local turns
  turns="$(python3 - "$data/ptxbench.db" "$name" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = db.execute(
    "SELECT u.turn, u.eval_status, u.speedup FROM turns u JOIN trajectories t ON u.trajectory = t.rowid "
    "JOIN experiments e ON t.experiment = e.rowid WHERE e.name = ? ORDER BY t.rowid, u.turn",
    (sys.argv[2],)).fetchall()
print(";".join(f"{t} {s} {v or 0}" for t, s, v in rows))
EOF
)"
  # 4 INCORRECT_NUMERICAL (2, 3: shape, dtype), then 1 PASSED with a time.
  local ok=FAIL
  if [ "$rc" = 0 ] && python3 -c '
import sys
turns = [t.split() for t in sys.argv[1].split(";") if t]
ok = (len(turns) == 2 and turns[0][1] in ("2", "3", "4") and turns[1][1] == "1"
      and float(turns[1][2]) > 0)
sys.exit(0 if ok else 1)' "$turns"; then
    ok=PASS
  else
    verdict=FAIL
  fi
  echo "$name: $ok (up rc=$rc, turns [turn status speedup]: ${turns:-none}, $(( $(date +%s) - start )) s)" \
    | tee -a "$out/triton_example_summary.txt"
  # The story: a scheduler alone on the same database.
  "$bin/ptxbench" up --data-dir "$data" --listen "$addr" --workers 0 --gateways 0 \
    > "$out/$name-up2.txt" 2>&1 &
  local up=$!
  sleep 3
  local cli=("$bin/ptxbench" --scheduler "$addr" --data-dir "$data")
  for t in $("${cli[@]}" list "$name" --output json | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(" ".join(x["trajectory"] for x in (d["trajectories"] if isinstance(d, dict) else d)))'); do
    "${cli[@]}" show "$t" >> "$out/$name-show.txt" 2>&1
  done
  kill -INT "$up"; wait "$up"
  cp -r "$data/logs" "$out/$name-logs"
}

# The CUDA quickstart first, in the database the Triton quickstart then shares.
timeout 200 "$bin/ptxbench" up --data-dir "$out/quickstart-triton-data" --listen 127.0.0.1:50575 \
  --torch-python "$python" --models examples/quickstart/models.json \
  --submit examples/quickstart.json --exit-when-done > "$out/quickstart-cuda.txt" 2>&1
echo "quickstart (CUDA, the same definition): up rc=$?" | tee -a "$out/triton_example_summary.txt"
run quickstart-triton 50573 --submit examples/quickstart_triton.json
# The two languages side by side, from a scheduler alone on that database.
"$bin/ptxbench" up --data-dir "$out/quickstart-triton-data" --listen 127.0.0.1:50576 --workers 0 \
  --gateways 0 > "$out/side_by_side-up.txt" 2>&1 &
up=$!
sleep 3
"$bin/ptxbench" --scheduler 127.0.0.1:50576 --data-dir "$out/quickstart-triton-data" \
  report quickstart quickstart-triton > "$out/side_by_side.txt" 2>&1
echo "report quickstart quickstart-triton: rc=$?"
cat "$out/side_by_side.txt"
kill -INT "$up"; wait "$up"
run ptxbench-triton 50574 --prompts "$hub" --model quickstart-triton-scripted \
  --submit examples/ptxbench_triton.json
echo "TRITON EXAMPLE: $verdict"
[ "$verdict" = PASS ]
