#!/usr/bin/env bash
# Developer tool: packs the GPU-side binaries of a Release build, with the
# non-glibc, non-CUDA shared libraries they need, into .device-gpu/ (ignored
# by git), for running on a GPU machine that has CUDA but not Debian's
# libraries. Usage: scripts/device/pack.sh [BUILD_DIR]; then on the GPU
# machine: scripts/device/gpu_suite.sh (carrying .device-gpu).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
out="$root/.device-gpu"
rm -rf "$out" && mkdir -p "$out"
bins=(
  worker/runner/ptxbench-runner worker/runner/ptxbench-candidate-host worker/runner/runner_gpu_test
  worker/runner/libptxbench-host.so worker/runner/torch_host.py worker/runner/triton_host.py worker/triton_eval_gpu_test worker/memcheck_gpu_test
  worker/worker_gpu_eval_gpu_test worker/adversarial_gpu_test worker/dataset_eval_gpu_test
  worker/gpu/gpu_test worker/compile/worker_compile_test worker/worker_compile_only_test
  cli/ptxbench scheduler/ptxbench-scheduler worker/ptxbench-worker
  agent_gateway/ptxbench-gateway bench/gpu/gemm_timing_bench bench/gpu/reference_timing_bench
  bench/gpu/direct_call bench/gpu/ipc_reach_probe bench/gpu/ctx_handover_probe bench/gpu/batch_gain_probe bench/gpu/ioctl_count.so tests/gpu_e2e_test
  agent_tool/ptxbench-agent-tool tests/agent_e2e_test
)
for b in "${bins[@]}" $(cd "$build" && ls workloads/reference/*_gpu_test 2>/dev/null); do
  [ -f "$build/$b" ] && cp "$build/$b" "$out/"
done
# glibc, the compiler runtime and CUDA come from the GPU machine itself.
skip='^(linux-vdso|libc\.|libm\.|ld-linux|libgcc_s|libstdc\+\+|libdl\.|libpthread|librt\.|libcu|libnv)'
for f in "$out"/*; do
  ldd "$f" > /dev/null 2>&1 || continue  # a script: nothing to carry
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ "$name" =~ $skip ]] || cp -n "$path" "$out/"
  done
done
# The census's tracer (worker/runner/hosts/kernel_census.h): opened, never linked,
# so ldd does not name it; the runner finds it by name on the loader's path.
for cupti in /usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13 \
             /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13; do
  [ -f "$cupti" ] && { cp -L "$cupti" "$out/"; break; }
done
# Symbols are not needed there; the working tree and the pack travel within
# 64 MiB together.
for f in "$out"/*; do
  file "$f" | grep -q ELF && strip --strip-unneeded "$f" 2>/dev/null
done
du -sh "$out"
