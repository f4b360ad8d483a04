#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/, clang + libFuzzer) into ./build-fuzz and
# runs each for a fixed time (FUZZ_SECONDS, default 12) from its seed corpus
# (fuzz/corpus/<target>); any crash, hang or sanitizer report fails. The
# README's test command runs it beside the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-12}
dir=${PTXB_FUZZ_BUILD_DIR:-build-fuzz}
CC=clang CXX=clang++ cmake -S fuzz -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$dir" -j "$(nproc)"
status=0
for target in launch_spec extract library_check runner_reply safetensors solution trace \
    eval_wire ncu_csv model_proxy utf8; do
  work="$dir/corpus-$target"
  mkdir -p "$work"
  # A target with a dictionary of its format's tokens gets it.
  dict=()
  [ -f "fuzz/$target.dict" ] && dict=(-dict="fuzz/$target.dict")
  echo "fuzz: $target for ${seconds}s"
  if ! "$dir/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 "${dict[@]}" "$work" "fuzz/corpus/$target" \
      > "$dir/$target.log" 2>&1; then
    echo "fuzz: $target FAILED:"
    tail -40 "$dir/$target.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|Done" "$dir/$target.log" | tr '\n' ' '
    echo
  fi
done
exit $status
