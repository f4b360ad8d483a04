#!/usr/bin/env bash
# clang's thread-safety analysis over the C++ translation units of the tree:
# the ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations are checked,
# not just written (docs/ARCHITECTURE.md, "Threads and locking"). The README's
# test command runs it beside the test suite; it fails, naming file:line, on
# any thread-safety warning, and on any translation unit clang cannot parse.
#
# It reuses the g++ build (scripts/setup.sh): each entry of
# $PTXB_BUILD_DIR/compile_commands.json is compiled again by clang++ with
# -fsyntax-only (no code generated: a parse and the analysis, not a build),
# with the entry's own defines and include paths, and only the thread-safety
# warnings on (clang's others differ from g++'s, and the g++ build is the one
# whose warnings the project keeps clean). The generated protobuf headers must
# exist, so the build must have run. The fuzz targets (fuzz/, not in that
# build) are checked with the flags of common/.
#
# Which translation units: by default those that can warn, that is those
# whose own text, or a header of the tree they include (directly or not),
# names a lock or an annotation (about a third of them). A warning needs a
# function body that touches an annotated lock or guarded member; a body of
# the tree that does either names it (absl::Mutex, MutexLock, CondVar) or sees
# it through a header of the tree that declares it. The others include only
# headers from outside the tree (Abseil's own are clean) and generated
# protobuf code, so they cannot warn; --all checks them too (every one is
# clean), at three times the cost, which would lengthen CI by minutes.
#
# Not checked: the nvcc-compiled CUDA files (.cu). Debian's clang 14 cannot
# parse them against this CUDA toolkit: it rejects sm_90a, and even for an
# older target its CUDA wrapper headers use texture templates that CUDA 12
# removed. They hold no mutex, and the one class with a mutex they use
# (worker/gpu/cupti_span.h) is checked where its methods are defined.
# The kernels under worker/testdata are test inputs, not part of the build.
#
# -Wthread-safety-beta is on: in clang 14 it is what checks the declared lock
# order (ABSL_ACQUIRED_BEFORE, as in executor/executor_runner.h), and the
# tree is clean under it.
#
# Runs at low priority (nice) on every core: beside the test suite it takes
# the CPU the mostly-waiting system tests leave idle.
#
#   scripts/thread_safety.sh            # the translation units that can warn
#   scripts/thread_safety.sh --all      # every one
#   scripts/thread_safety.sh FILE...    # only these
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${PTXB_BUILD_DIR:-build}
db="$build_dir/compile_commands.json"
if [ ! -f "$db" ]; then
  echo "thread-safety: $db not found; build first (scripts/setup.sh)" >&2
  exit 1
fi
exec nice -n "${PTXB_THREAD_SAFETY_NICE:-10}" python3 - "$db" "$(nproc)" "$@" <<'PY'
import concurrent.futures, json, os, re, shlex, subprocess, sys, tempfile, time

db_path, jobs, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
everything = "--all" in args
only = [a for a in args if a != "--all"]
root = os.getcwd()
FLAGS = ["-fsyntax-only", "-fno-color-diagnostics", "-Wno-everything", "-Wthread-safety",
         "-Wthread-safety-beta", "-Werror=thread-safety"]


def clang_args(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out, skip = ["clang++"], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c" and not a.startswith("-W"):  # the build's warnings: only ours
            out.append(a)
    return out + FLAGS


entries = {}
for e in json.load(open(db_path)):
    path = os.path.relpath(os.path.join(e["directory"], e["file"]), root)
    if path.endswith((".cc", ".cpp", ".cxx")):
        entries[path] = (e["directory"], clang_args(e))
template = entries.get("common/log.cc")
if template is None:
    sys.exit("thread-safety: common/log.cc is not in %s; is it the build of this tree?" % db_path)
for name in sorted(os.listdir("fuzz")):
    if name.endswith(".cc"):
        fuzz_args = [a for a in template[1] if not a.endswith("common/log.cc")]
        entries["fuzz/" + name] = (template[0], fuzz_args + [os.path.join(root, "fuzz", name)])
total = len(entries)

LOCKISH = re.compile(r"Mutex|CondVar|SpinLock|GUARDED_BY|LOCKS_|LOCKABLE|ACQUIRE|RELEASE|"
                     r"AssertHeld|AssertReaderHeld|thread_annotations")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
scanned = {}  # file -> (names a lock, the files of the tree it includes)


def can_warn(path, seen):
    if path in seen:
        return False
    seen.add(path)
    if path not in scanned:
        text = open(path, errors="replace").read()
        includes = []
        for inc in INCLUDE.findall(text):
            for base in (os.path.dirname(path), ""):
                if os.path.isfile(os.path.join(base, inc)):
                    includes.append(os.path.normpath(os.path.join(base, inc)))
                    break
        scanned[path] = (bool(LOCKISH.search(text)), includes)
    lockish, includes = scanned[path]
    return lockish or any(can_warn(inc, seen) for inc in includes)


if only:
    wanted = {os.path.relpath(os.path.abspath(f), root) for f in only}
    missing = wanted - entries.keys()
    if missing:
        sys.exit("thread-safety: not a translation unit of the build: " + " ".join(sorted(missing)))
    entries = {p: entries[p] for p in wanted}
elif not everything:
    entries = {p: e for p, e in entries.items() if can_warn(p, set())}


def check(item):
    path, (directory, args) = item
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(args, cwd=directory, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return path, p.returncode, text, usage.ru_utime + usage.ru_stime


start = time.monotonic()
diag = re.compile(r"^(/[^:]+|[^/:][^:]*):(\d+):(\d+): (warning|error): (.*)$")
problems, failed, cpu = {}, [], 0.0
with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
    for path, rc, output, took in pool.map(check, sorted(entries.items())):
        cpu += took
        found = False
        for line in output.splitlines():
            m = diag.match(line)
            if m:
                found = True
                where = os.path.relpath(os.path.realpath(m.group(1)), root)
                key = "%s:%s:%s: %s" % (where, m.group(2), m.group(3), m.group(5))
                problems.setdefault(key, path)
        if rc != 0 and not found:
            failed.append((path, output))
for line in sorted(problems):
    print("thread-safety: %s  (in %s)" % (line, problems[line]))
for path, output in failed:
    print("thread-safety: clang++ failed on %s:\n%s" % (path, output))
print("thread-safety: %d of %d translation units, %.0f s CPU (%.1f s each), %.0f s on %d jobs"
      % (len(entries), total, cpu, cpu / max(1, len(entries)), time.monotonic() - start, jobs))
if problems or failed:
    print("thread-safety: FAILED: %d problems, %d translation units clang could not check"
          % (len(problems), len(failed)))
    sys.exit(1)
print("thread-safety: clean")
PY
