#!/usr/bin/env bash
# Developer tool, run on a GPU machine from the repository root: which GPU
# allocations a forged legacy CUDA IPC handle reaches (docs/SECURITY.md, "The
# memory model"). Starts an exporter (ipc_reach_probe's own allocations, then
# PyTorch's with its default and its expandable-segments allocator) and runs
# forgers against each: as root, and as uid 65534 in a PID namespace of its
# own, without and with the candidate host's seccomp rules. Also: an fd-passed
# VMM allocation imported across uids, a stream-memory-operation bracket, and
# the NVIDIA driver escapes each operation needs (ioctl_count.so).
#   BIN=DIR bench/gpu/ipc_reach.sh      (DIR holds ipc_reach_probe, ioctl_count.so)
set -uo pipefail
bin="${BIN:-.device-gpu}"
out="${OUT:-out}"
mkdir -p "$out"
probe="$bin/ipc_reach_probe"
tmp=$(mktemp -d)
chmod 755 "$tmp"
sock="$tmp/probe.sock"
exp_pid=""

start_exporter() {  # command...
  rm -f "$tmp/in"
  mkfifo "$tmp/in"
  "$@" < "$tmp/in" > "$tmp/exporter.out" 2>&1 &
  exp_pid=$!
  exec 7> "$tmp/in"
  for _ in $(seq 600); do
    grep -q '^READY' "$tmp/exporter.out" && break
    kill -0 "$exp_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$tmp/exporter.out"
  seed=$(awk '/^READY/ {print $2}' "$tmp/exporter.out")
}
stop_exporter() {
  exec 7>&-
  for _ in $(seq 150); do kill -0 "$exp_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$exp_pid" 2>/dev/null
  wait "$exp_pid" 2>/dev/null
  sed -n '/^READY/,$p' "$tmp/exporter.out" | tail -n +2
}
forge() {  # title, forger arguments...
  echo "### $1"
  shift
  timeout 120 "$probe" forger --seed "$seed" "$@" 7>&-
  echo "(forger exit $?)"
}

echo "## ipc_reach_probe's own allocations"
start_exporter timeout 600 "$probe" exporter --sock "$sock"
LD_PRELOAD="$bin/ioctl_count.so" forge "root, same namespaces, no filter (escapes counted)" --sock "$sock"
forge "uid 65534, no filter" --uid 65534 --sock "$sock"
LD_PRELOAD="$bin/ioctl_count.so" forge "uid 65534, RM_DUP_OBJECT, RM_SHARE, XFER refused (escapes counted)" \
  --uid 65534 --deny-ioctl 0x34,0x35,0xd3 --sock "$sock"
forge "uid 65534, the candidate host's rules (RM_DUP_OBJECT, RM_SHARE, executable memory)" \
  --uid 65534 --deny-ioctl 0x34,0x35,0xd3 --deny-exec --sock "$sock" --span 64 \
  --dlopen /usr/local/cuda/lib64/libcublas.so.13
stop_exporter

for kind in 10 11; do
  if [ "$kind" = 11 ]; then
    export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    echo "## PyTorch, expandable_segments"
  else
    unset PYTORCH_CUDA_ALLOC_CONF
    echo "## PyTorch, default allocator"
  fi
  start_exporter timeout 300 python3 bench/gpu/ipc_reach_torch.py "$kind"
  forge "uid 65534, no filter" --uid 65534
  forge "uid 65534, RM_DUP_OBJECT, RM_SHARE, XFER refused" --uid 65534 --deny-ioctl 0x34,0x35,0xd3 --span 64
  stop_exporter
done
unset PYTORCH_CUDA_ALLOC_CONF
rm -rf "$tmp"
