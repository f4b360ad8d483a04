#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), then configures and builds
# ptxbench into ./build (override with PTXB_BUILD_DIR). Safe to run again:
# installed packages and an up-to-date build are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config libssl-dev
  openssl  # scripts/make_certs.sh: the TLS tests' CA and certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libsqlite3-dev libgtest-dev libgmock-dev nlohmann-json3-dev libcurl4-openssl-dev
  libbenchmark-dev libzstd-dev libcpp-httplib-dev libseccomp-dev
  libjemalloc-dev  # the scheduler's allocator
  clang libclang-rt-14-dev python3-torch
  python3-pandas  # a test reads the csv/jsonl exports back (6 MB, 8 s to install)
  chromium  # headless: the browser tests of the HTML report and the live dashboard
  prometheus  # promtool checks the /metrics pages
  slurmctld slurmd slurm-client munge  # the Slurm recipe's test runs a one-node Slurm
  iproute2)  # ip netns: the network-partition test
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ptxbench setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The pinned agent CLIs of agent mode (docs/AGENTS.md) from npm's registry into
# a project-local prefix, exactly as package-lock.json records them (versions
# and integrity hashes). --ignore-scripts: no package's install script runs;
# ptxbench runs each CLI's program directly (agents/clis.h). Without them the
# agent CLI tests skip, saying so.
clis=third_party/agent-clis
if ! cmp -s "$clis/package-lock.json" "$clis/node_modules/.ptxb-installed-lock" 2>/dev/null; then
  if ! command -v npm >/dev/null; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends npm
  fi
  echo "ptxbench setup: installing the pinned agent CLIs (npm ci, about 900 MB)"
  if (cd "$clis" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
    cp "$clis/package-lock.json" "$clis/node_modules/.ptxb-installed-lock"
  else
    echo "ptxbench setup: WARNING: npm ci failed; the agent CLI tests will skip" >&2
  fi
fi

build_dir=${PTXB_BUILD_DIR:-build}
echo "ptxbench setup: building into $build_dir (this takes a few minutes the first time)"
# clang builds ptxbench: its thread-safety analysis checks every lock
# annotation of the tree as part of the build (cmake/warnings.cmake). nvcc
# keeps its default host compiler (g++) for the .cu files.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${PTXB_BUILD_TYPE:-Release}" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
