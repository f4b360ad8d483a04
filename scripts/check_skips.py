#!/usr/bin/env python3
"""Says how many tests skipped and why, and fails on a skip this machine should not have.

Usage: scripts/check_skips.py ALLOWED JUNIT.xml...

ALLOWED lists the reasons a test may skip for on this kind of machine, one
regular expression per line (# comments, blank lines ignored); a skip whose
reason matches none of them fails the run. The reasons come from ctest's
JUnit files (ctest --output-junit, with --test-output-size-passed large
enough to keep a test's whole output): GoogleTest's "Skipped" line and the
message under it, else the last line a test printed (a script that exits
77). A CI machine that lost nvcc, node or Chromium then fails instead of
skipping the tests that need them and staying green.
"""

import collections
import re
import sys
import xml.etree.ElementTree as ET


def reason_of(output):
    # GoogleTest: "path:line: Skipped" then the message, up to the
    # "[  SKIPPED ]" line.
    m = re.search(r": Skipped\n(.*?)\n\[  SKIPPED \]", output, re.S)
    if m and m.group(1).strip():
        return " ".join(m.group(1).split())
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    return lines[-1] if lines else "(it printed nothing)"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    allowed = []
    with open(argv[1]) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                allowed.append(re.compile(line))
    by_reason = collections.defaultdict(list)
    for path in argv[2:]:
        for case in ET.parse(path).getroot().iter("testcase"):
            if case.find("skipped") is None:
                continue
            out = case.find("system-out")
            by_reason[reason_of(out.text if out is not None and out.text else "")].append(
                case.get("name"))
    total = sum(len(v) for v in by_reason.values())
    print(f"skipped: {total} tests, for {len(by_reason)} reasons")
    unexpected = 0
    for reason, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        ok = any(p.search(reason) for p in allowed)
        if not ok:
            unexpected += len(names)
        print(f"  {len(names):4d} {'' if ok else 'UNEXPECTED '}{reason}")
        if not ok:
            for n in sorted(names)[:10]:
                print(f"         {n}")
            if len(names) > 10:
                print(f"         ... and {len(names) - 10} more")
    if unexpected:
        print(f"skips: FAILED: {unexpected} tests skipped for a reason this machine should not "
              f"have (allowed: {argv[1]})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
