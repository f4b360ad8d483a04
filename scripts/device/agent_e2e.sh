#!/usr/bin/env bash
# Developer tool for the GPU machine, which has no node, no zstd and no agent
# CLIs, and takes at most 64 MiB per call: what calls carry in .dc*/ is kept
# under third_party/agent-clis/node_modules/.carry (git-ignored, so it stays
# while the machine stays warm), then unpacked and tested. Run from the
# repository root, in one call or several:
#   store                 keep every file of .dc*/: NAME.NN parts appended in order
#   unpack NAME [DIR]     unpack the kept NAME.tar.zst into DIR (default: node_modules)
#   node                  install the kept node.zst as /usr/local/bin/node (in the sessions' view)
#   test CLI              the agent end-to-end test for CLI (claudecode, codex, geminicli)
set -uo pipefail
root="$(pwd)"
mods="$root/third_party/agent-clis/node_modules"
keep="$mods/.carry"
out="${OUT:-$root/out}"
mkdir -p "$keep" "$out"
z() { LD_LIBRARY_PATH="$keep/tools" "$keep/tools/zstd" "$@"; }
case "${1:-}" in
  store)
    for f in $(ls .dc*/* .dc*/tools/* 2>/dev/null | awk -F/ '{print $NF "\t" $0}' | sort | cut -f2); do
      [ -d "$f" ] && continue
      base="$(basename "$f")"
      case "$f" in
        */tools/*) mkdir -p "$keep/tools"; cp "$f" "$keep/tools/" ;;
        *.[0-9][0-9]) cat "$f" >> "$keep/${base%.*}" ;;
        *) cp "$f" "$keep/$base" ;;
      esac
    done
    ls -la "$keep" ;;
  unpack)
    dest="${3:-$mods}"; mkdir -p "$dest"
    z -q -d -c "$keep/$2.tar.zst" | tar -C "$dest" -xf - && echo "unpacked $2" ;;
  node)
    z -q -d -c "$keep/node.zst" > /usr/local/bin/node && chmod 755 /usr/local/bin/node
    node --version ;;
  test)
    [ -d .device-gpu ] || { z -q -d -c "$keep/pack.tar.zst" | tar -xf -; }
    source scripts/device/env.sh
    # A session's sandbox gets no LD_LIBRARY_PATH: the tool binary finds the
    # carried libraries where the machine's own are (never replacing one).
    cp -n .device-gpu/*.so* /usr/lib/x86_64-linux-gnu/ 2>/dev/null; ldconfig
    timeout 500 .device-gpu/agent_e2e_test --gtest_filter="*$2*" > "$out/agent_e2e_$2.txt" 2>&1
    echo "rc=$?" >> "$out/agent_e2e_$2.txt"
    grep -E '^\[ +(OK|FAILED|PASSED|SKIPPED)' "$out/agent_e2e_$2.txt"
    for f in /tmp/ptxb_e2e_agent_*/logs/*.log; do echo "== $f"; tail -30 "$f"; done > "$out/logs_$2.txt" 2>&1 ;;
esac
