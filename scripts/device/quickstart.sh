#!/usr/bin/env bash
# Developer tool, on the GPU machine (with .device-gpu/ carried): the
# README's main job with the packed binaries, `ptxbench up` submitting the
# quickstart experiment and stopping when it is done, then `status`, `list`
# and `show` of every trajectory from the same database. Output under $OUT.
set -uo pipefail
source "$(dirname "$0")/env.sh"
bin="$root/.device-gpu"
data="$out/quickstart-data"
addr=127.0.0.1:50571
start=$(date +%s%N)
"$bin/ptxbench" up --data-dir "$data" --listen "$addr" --models examples/quickstart/models.json \
  --submit examples/quickstart.json --exit-when-done > "$out/quickstart.txt" 2>&1
rc=$?
echo "up rc=$rc wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))" | tee -a "$out/quickstart.txt"
# The story afterwards: a scheduler alone on the same database.
"$bin/ptxbench" up --data-dir "$data" --listen "$addr" --workers 0 --gateways 0 > "$out/up2.txt" 2>&1 &
up=$!
sleep 3
cli=("$bin/ptxbench" --scheduler "$addr" --data-dir "$data")
"${cli[@]}" status > "$out/status.txt" 2>&1
"${cli[@]}" status quickstart >> "$out/status.txt" 2>&1
"${cli[@]}" list quickstart > "$out/list.txt" 2>&1
for t in $("${cli[@]}" list quickstart --output json |
           python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(x["trajectory"] for x in (d["trajectories"] if isinstance(d, dict) else d)))'); do
  "${cli[@]}" show "$t" >> "$out/show.txt" 2>&1
done
kill -INT "$up"; wait "$up"
cp -r "$data/logs" "$out/quickstart-logs"
rm -f "$data"/ptxbench.db*  # the figures are in the text files
