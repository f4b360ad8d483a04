#!/usr/bin/env python3
"""The include rule of docs/ARCHITECTURE.md, checked: a folder of ptxbench may
include only itself and the folders listed above it in that page's "Folders"
table; inside a folder with a "Rooms of `folder/`" table, a room (subfolder)
may include only itself and the rooms above it there (the folder's own top
level, such as a main.cc, may include any room). A folder deeper down may
have rooms of its own ("Rooms of `worker/runner/`"), held to the same rule. The tables are the rule, so
the page and the check cannot drift apart.

  scripts/check_includes.py [ROOT]     exit 0: every include follows the rule;
                                       1: one line per include that does not.

Tests (files named *_test.*, *_fixture.h, *_test_util.h) may also include
`testing/`, the helpers only tests link. A folder missing from the table is
itself a violation: every folder of code has a place in it.
"""
import os
import re
import sys

SOURCE = (".h", ".cc", ".cu", ".inc")
TEST_FILE = re.compile(r"(_test\.(cc|cu|h)|_fixture\.h|_test_util\.h)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Generated code of protos/ is included by its package path.
ALIASES = {"ptxbench": "protos"}
NOT_CODE = {"build", "docs", "examples", "scripts", "cmake", "deploy", "prompts_data",
            "third_party"}  # third_party: what npm installs, not ptxbench's code


def table_order(section):
    """The folder names of a table's first column, top to bottom."""
    order = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        for name in re.findall(r"`([a-z_]+)/`", first):
            if name not in order:
                order.append(name)
    return order


def architecture(root):
    """The Folders table's order, and each "Rooms of `X/`" table's."""
    text = open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8").read()
    folders = table_order(text.split("\n## Folders", 1)[1].split("\n## ", 1)[0])
    rooms = {}
    for m in re.finditer(r"\n## Rooms of `([a-z_]+(?:/[a-z_]+)*)/`", text):
        rooms[m.group(1)] = table_order(text[m.end():].split("\n## ", 1)[0])
    return folders, rooms


def room_problems(root, top, order, files):
    """The include rule among the rooms of folder `top` ("cli", "worker/runner")."""
    rank = {name: i for i, name in enumerate(order)}
    depth = len(top.split("/"))
    problems = []
    for file in files:
        rel = os.path.relpath(file, root)
        parts = rel.split(os.sep)
        if parts[:depth] != top.split("/"):
            continue
        if len(parts) < depth + 2:
            continue  # the folder's own top level may include any room
        room = parts[depth]
        if room not in rank:
            problems.append(f"{top}/{room}/: a room docs/ARCHITECTURE.md's Rooms of `{top}/` does not list")
            continue
        text = open(file, encoding="utf-8", errors="replace").read()
        for included in INCLUDE.findall(text):
            bits = included.split("/")
            if (len(bits) < depth + 2 or bits[:depth] != top.split("/") or bits[depth] == room
                    or bits[depth] not in rank):
                continue
            if rank[bits[depth]] > rank[room]:
                problems.append(f'{rel}: includes "{included}", but {top}/{bits[depth]}/ is below '
                                f"{top}/{room}/ in docs/ARCHITECTURE.md's Rooms of `{top}/`")
    return sorted(set(problems))


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    order, rooms = architecture(root)
    rank = {name: i for i, name in enumerate(order)}
    problems = []
    for top in sorted(os.listdir(root)):
        path = os.path.join(root, top)
        if top.startswith(".") or top in NOT_CODE or not os.path.isdir(path):
            continue
        files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith(SOURCE)]
        if not files:
            continue
        if top not in rank:
            problems.append(f"{top}/: a folder of code that docs/ARCHITECTURE.md's Folders table does not list")
            continue
        for folder in sorted(rooms):
            if folder == top or folder.startswith(top + "/"):
                problems += room_problems(root, folder, rooms[folder], sorted(files))
        for file in sorted(files):
            rel = os.path.relpath(file, root)
            text = open(file, encoding="utf-8", errors="replace").read()
            for included in INCLUDE.findall(text):
                head = included.split("/", 1)[0]
                head = ALIASES.get(head, head)
                if "/" not in included or head not in rank or head == top:
                    continue  # a sibling header, a library's, or the folder's own
                if rank[head] < rank[top]:
                    continue
                if head == "testing" and TEST_FILE.search(file):
                    continue
                problems.append(f'{rel}: includes "{included}", but {head}/ is below {top}/ '
                                f"in docs/ARCHITECTURE.md's Folders table")
    for p in problems:
        print(p)
    if problems:
        print(f"include rule: {len(problems)} violation(s)")
        return 1
    print(f"include rule: {len(order)} folders and the rooms of {len(rooms)}, every include "
          "points up its table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
