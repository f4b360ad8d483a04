#!/usr/bin/env bash
# Developer tool, on the GPU machine from the repository root with .device-gpu/
# carried (scripts/device/pack.sh): the census's cost on the figures
# (docs/MEASUREMENT.md). The bundled definitions' simple CUDA kernels
# (worker_gpu_eval_gpu_test's PerDefinitionTest) are evaluated with the census
# of builds on and off, twice each in turn (on, off, on, off: a drift of the
# card's clocks shows as a difference between the two runs of one setting), and
# one line per definition gives the median of each setting's trial medians and
# their ratio. Prints "CENSUS COST: <worst ratio>".
#
#   scripts/device/census_cost.sh
set -uo pipefail
source "$(dirname "$0")/env.sh"
filter='Bundled/PerDefinitionTest.SimpleCorrectKernelPasses/*'
for run in on1 off1 on2 off2; do
  if [[ $run == off* ]]; then export PTXBENCH_TEST_CENSUS_OFF=1; else unset PTXBENCH_TEST_CENSUS_OFF; fi
  timeout 150 "$root/.device-gpu/worker_gpu_eval_gpu_test" --gtest_filter="$filter" \
    > "$out/census_cost_$run.txt" 2>&1
  echo "$run rc=$?"
done
python3 - "$out" <<'PY'
import re, statistics, sys
out = sys.argv[1]
figures = {}  # (definition, setting) -> trial medians
for run in ("on1", "off1", "on2", "off2"):
    definition = None
    for line in open(f"{out}/census_cost_{run}.txt"):
        m = re.match(r"^(\w+): (PASSED|\w+)$", line.strip())
        if m:
            definition = m.group(1)
        m = re.match(r"^candidate trial \d+: median ([0-9.]+) ms", line)
        if m and definition:
            figures.setdefault((definition, run[:-1]), []).append(float(m.group(1)))
worst = 0
print(f"{'definition':28} {'census on ms':>12} {'off ms':>10} {'on/off':>8}")
for d in sorted({d for d, _ in figures}):
    on, off = figures.get((d, "on"), []), figures.get((d, "off"), [])
    if not on or not off:
        print(f"{d:28} missing ({len(on)} on, {len(off)} off)")
        worst = float("inf")
        continue
    ratio = statistics.median(on) / statistics.median(off)
    worst = max(worst, abs(ratio - 1))
    print(f"{d:28} {statistics.median(on):12.4f} {statistics.median(off):10.4f} {ratio:8.4f}")
print(f"CENSUS COST: worst |on/off - 1| = {worst:.4f}")
PY
