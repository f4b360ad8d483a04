#!/usr/bin/env python3
"""The link launcher of the `ptxbench` CLI (cli/CMakeLists.txt, RULE_LAUNCH_LINK).

Runs the link command CMake made, with each shared library of the system that
has a static archive beside it (gRPC, protobuf, Abseil, c-ares, re2, upb,
SQLite, zstd) replaced by the archive, all of them in one linker group. A
command-line tool is started for every command a user types and by every
test; loading and binding ~80 shared libraries was half of its start-up
(docs/DECISIONS.md, issue 31). cpp-httplib has no archive and loads OpenSSL
as a shared library, so OpenSSL stays shared too (one copy in the process);
so does everything given as -lNAME but re2. Where no archive exists the
shared library stays: the link works on any machine, only slower to start.
"""
import glob
import os
import re
import subprocess
import sys

KEEP_SHARED = ("libssl", "libcrypto", "libcpp-httplib")
SYSTEM_LIB = re.compile(r"^(/usr/lib/[^ ]+/)(lib[^/]+?)\.so(\.[0-9.]+)?$")


def main(argv):
    out, archives, group_at = [], [], None
    abseil_dir = None
    for arg in argv:
        m = SYSTEM_LIB.match(arg)
        archive = m and m.group(1) + m.group(2) + ".a"
        if m and not m.group(2).startswith(KEEP_SHARED) and os.path.exists(archive):
            group_at = len(out)  # the last one's place: every archive before it is resolved
            if archive not in archives:
                archives.append(archive)
            if m.group(2).startswith("libabsl_"):
                abseil_dir = m.group(1)
            continue
        if arg == "-lre2" and group_at is not None:
            re2 = glob.glob("/usr/lib/*/libre2.a")
            if re2:
                archives.append(re2[0])
                continue
        out.append(arg)
    if group_at is not None:
        # The archives' own dependencies on Abseil were the shared libraries'
        # (not on this command line): every Abseil archive joins the group.
        if abseil_dir:
            for a in sorted(glob.glob(abseil_dir + "libabsl_*.a")):
                if a not in archives:
                    archives.append(a)
        out[group_at:group_at] = ["-Wl,--start-group", *archives, "-Wl,--end-group"]
    return subprocess.call(out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
