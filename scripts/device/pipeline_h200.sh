#!/usr/bin/env bash
# Developer tool, on the GPU machine (with .device-gpu/ carried): the Fixit
# example with full evaluation. `ptxbench up` serves the bundled scripted
# models plus a repair model whose fix is the TMA GEMM of
# worker/testdata/tvm_ffi (so its SASS has Hopper instructions), the base
# experiment runs, then a copy of examples/pipelines/fixit.json whose pairs
# keep only fixes with Hopper SASS (arch_features: hopper); after the model
# stage, `up` starts again serving the tuned model too, and the evaluation
# runs. The TMA GEMM is plain FMA (slow at M=8192): the copy keeps two
# failed turns and gives each repair one turn with a target any pass meets.
# Manifests, `pipeline status`, `report BASE TUNED` and, where a stage fails,
# the experiments' state and the logs' tails land under $OUT.
set -uo pipefail
source "$(dirname "$0")/env.sh"
bin="$root/.device-gpu"
data="${TMPDIR:-/tmp}/pipeline-data"
gen="$out/pipeline-gen"
addr=127.0.0.1:50572
mkdir -p "$gen/repair-tma/gemm_n7168_k5120"
{ echo "The fix: tiles of A and B arrive in shared memory through TMA."; echo '```cuda';
  cat worker/testdata/tvm_ffi/tma_gemm.cu; echo '```'; } > "$gen/repair-tma/gemm_n7168_k5120/answer.md"
cat > "$gen/models.json" <<JSON
{"models": {"pipeline-repair-tma": {"provider": "scripted", "answers_dir": "$gen/repair-tma",
  "notes": "The TMA GEMM of worker/testdata/tvm_ffi, whatever it is asked."}}}
JSON
python3 - "$gen" "$root" <<'PY'
import json, sys
gen, root = sys.argv[1], sys.argv[2]
p = json.load(open(f"{root}/examples/pipelines/fixit.json"))
p["name"] = "fixit-h200"
for s in p["stages"]:
    if s["kind"] == "select": s["per_definition_cap"] = 2
    if s["kind"] == "derive":
        s["model"] = "pipeline-repair-tma"; s["num_turns"] = 1; s["target_speedup"] = 0.001
    if s["kind"] == "pairs": s["arch_features"] = "hopper"; s["accept_compiled"] = "no"
    if s["kind"] == "model": s["answers_dir"] = f"{root}/examples/pipelines/answers/tuned"
    if s["kind"] == "evaluate": s["spec"] = f"{root}/examples/pipelines/base.json"
json.dump(p, open(f"{gen}/fixit-h200.json", "w"), indent=1)
PY
pipeline="$gen/fixit-h200.json"
cli=("$bin/ptxbench" --scheduler "$addr" --data-dir "$data")
up() {
  "$bin/ptxbench" up --data-dir "$data" --listen "$addr" --models "$1" > "$out/up$2.txt" 2>&1 &
  pid=$!
  for _ in $(seq 60); do "${cli[@]}" workers > /dev/null 2>&1 && break; sleep 1; done
  sleep 3
}
up "examples/pipelines/models.json,$gen/models.json" 1
start=$(date +%s)
"${cli[@]}" submit examples/pipelines/base.json > "$out/pipeline-submit.txt" 2>&1
"${cli[@]}" pipeline check "$pipeline" > "$out/pipeline-check.txt" 2>&1
diagnose() {
  { "${cli[@]}" status; for e in $("${cli[@]}" status --output json | python3 -c \
      'import json,sys; print(" ".join(x["experiment"] for x in json.load(sys.stdin)["experiments"]))'); do
      "${cli[@]}" status "$e"; done
    # The census of each turn of each experiment's first trajectory.
    for e in $("${cli[@]}" status --output json | python3 -c \
        'import json,sys; print(" ".join(x["experiment"] for x in json.load(sys.stdin)["experiments"]))'); do
      t=$("${cli[@]}" list "$e" --output json | grep -o '"tr_[0-9a-f]*"' | head -1 | tr -d '"')
      echo "--- census of $t ($e)"
      "${cli[@]}" show "$t" --output json | python3 -c '
import json, sys
def walk(x, path):
    if isinstance(x, dict):
        for k, v in x.items():
            if any(w in k.lower() for w in ("sass", "architecture", "status", "speedup")) and not isinstance(v, (dict, list)) or k.lower() in ("sass", "architecture_counts", "architectureCounts"):
                print(path + "." + k, json.dumps(v)[:300])
            else:
                walk(v, path + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x): walk(v, path + "[%d]" % i)
walk(json.load(sys.stdin), "")'
    done
    for f in "$data"/logs/*.log; do echo "--- $f"; tail -n 40 "$f"; done; } > "$out/diagnosis.txt" 2>&1
}
for stage in failed repairs pairs reasoning records tuned; do
  timeout 300 "${cli[@]}" pipeline run "$pipeline" "$stage" --wait >> "$out/pipeline-run.txt" 2>&1
  rc=$?
  echo "stage $stage rc=$rc at $(( $(date +%s) - start )) s" | tee -a "$out/pipeline-run.txt"
  if [ $rc -ne 0 ]; then diagnose; kill -INT "$pid"; wait "$pid"; rm -rf "$data"; exit 1; fi
  # UPTO=STAGE ends the run there (a short GPU lease), with the diagnosis.
  if [ "${UPTO:-}" = "$stage" ]; then diagnose; kill -INT "$pid"; wait "$pid"; rm -rf "$data"; exit 0; fi
done
tuned="$(python3 -c 'import json,sys; print([s["folder"] for s in json.load(sys.stdin)["stages"] if s["kind"]=="model"][0])' \
  < <("${cli[@]}" pipeline status "$pipeline" --output json))"
kill -INT "$pid"; wait "$pid"
up "examples/pipelines/models.json,$gen/models.json,$tuned/models.json" 2
"${cli[@]}" pipeline run "$pipeline" --wait >> "$out/pipeline-run.txt" 2>&1
echo "whole pipeline rc=$? at $(( $(date +%s) - start )) s" | tee -a "$out/pipeline-run.txt"
"${cli[@]}" pipeline run "$pipeline" >> "$out/pipeline-rerun.txt" 2>&1
echo "rerun rc=$?" >> "$out/pipeline-rerun.txt"
"${cli[@]}" pipeline status "$pipeline" > "$out/pipeline-status.txt" 2>&1
"${cli[@]}" pipeline status "$pipeline" --output json > "$out/pipeline-status.json" 2>&1
ids="$(python3 -c 'import json,sys; e=[s for s in json.load(sys.stdin)["stages"] if s["kind"]=="evaluate"][0]["manifest"]["experiments"]; print(e["base"], e["tuned"])' \
  < "$out/pipeline-status.json")"
"${cli[@]}" report $ids > "$out/pipeline-report.txt" 2>&1
"${cli[@]}" status > "$out/pipeline-experiments.txt" 2>&1
"${cli[@]}" pipeline manifests fixit-h200 --output json > "$out/pipeline-manifests.json" 2>&1
diagnose
kill -INT "$pid"; wait "$pid"
rm -rf "$data"
