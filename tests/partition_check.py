#!/usr/bin/env python3
"""The database and log checks of tests/partition_test.sh.

    partition_check.py COMMAND ARGS... DATABASE

Each command exits 0 when its check holds and 1, saying why, when it does
not; the test polls some of them (cut-leases, moved, refused-in-log) until
they hold. The database is opened read-only: the scheduler keeps writing.
Table and column names are those of scheduler/store/schema.cc; state numbers are
scheduler/store/schema.h's TaskState and ptxbench.v1.TrajectoryState.
"""
import json
import re
import sqlite3
import sys

LEASED, DONE = 1, 2  # TaskState
LLM, EVAL = 1, 2  # StepKind
LIMITS_EXCEEDED = 4  # TrajectoryState: the turn limit was reached
# The lines in which an executor's log says a report of it was refused
# (executor/executor_runner.cc, logfmt: a value is quoted only when it has a
# space): a completion refused as stale (FAILED_PRECONDITION), or a
# heartbeat told that the lease is no longer its own.
REFUSAL = re.compile(r' msg=(rejected|"lease revoked") ')
ACCEPTED = re.compile(r' msg=completed ')


def connect(path):
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)


def cut_tasks(path):
    with open(path) as f:
        return json.load(f)


def cut_leases(db, node1, out):
    """The tasks node1 holds now, written to OUT; fails when there are none."""
    rows = db.execute(
        "SELECT t.rowid, t.lease_id, j.id, t.turn, t.kind FROM tasks t "
        "JOIN trajectories j ON j.rowid = t.trajectory WHERE t.state = ? AND t.executor = ?",
        (LEASED, node1)).fetchall()
    held = [{"task_id": f"tk_{r[0]}", "rowid": r[0], "lease_id": r[1], "trajectory": r[2],
             "turn": r[3], "kind": r[4]} for r in rows]
    with open(out, "w") as f:
        json.dump(held, f)
    if not held:
        sys.exit("node1 held no lease at the cut")


def moved(db, node1, node2, cut):
    """Every task cut off with node1 expired there and was finished by node2."""
    for t in cut_tasks(cut):
        state, executor = db.execute("SELECT state, executor FROM tasks WHERE rowid = ?",
                                     (t["rowid"],)).fetchone()
        expired = db.execute(
            "SELECT count(*) FROM events WHERE kind = 'task.expired' AND trajectory = ? "
            "AND turn = ? AND detail LIKE ?", (t["trajectory"], t["turn"], f"%{node1}%")).fetchone()[0]
        if state != DONE or executor != node2 or expired == 0:
            sys.exit(f"{t['task_id']}: state {state}, executor {executor}, "
                     f"{expired} expiries of node1's lease")


def rows_of(db, t):
    task = db.execute("SELECT * FROM tasks WHERE rowid = ?", (t["rowid"],)).fetchone()
    turn = db.execute(
        "SELECT * FROM turns WHERE turn = ? AND trajectory = "
        "(SELECT rowid FROM trajectories WHERE id = ?)", (t["turn"], t["trajectory"])).fetchone()
    return {"task": list(task), "turn": [v.hex() if isinstance(v, bytes) else v for v in turn]}


def snapshot(db, cut, out):
    with open(out, "w") as f:
        json.dump({t["task_id"]: rows_of(db, t) for t in cut_tasks(cut)}, f)


def unchanged(db, cut, before):
    """node1's late reports changed no row of the tasks they were about."""
    with open(before) as f:
        then = json.load(f)
    for t in cut_tasks(cut):
        now = json.loads(json.dumps(rows_of(db, t)))
        if now != then[t["task_id"]]:
            sys.exit(f"{t['task_id']} changed after the heal:\n  before {then[t['task_id']]}\n"
                     f"  after  {now}")


def refused_in_log(db, cut, log):
    """node1's log says, for every task cut off with it, that a report
    about its old lease was refused, and never that one was accepted."""
    with open(log) as f:
        lines = f.read().splitlines()
    for t in cut_tasks(cut):
        mine = [l for l in lines if f" task_id={t['task_id']} lease_id={t['lease_id']}" in l]
        if any(ACCEPTED.search(l) for l in mine):
            sys.exit(f"node1's late report of {t['task_id']} was accepted: {mine}")
        refusals = [l for l in mine if REFUSAL.search(l)]
        if not refusals:
            sys.exit(f"no refusal of {t['task_id']} (lease {t['lease_id']}) in {log}")
        print("\n".join(refusals))


def rejoined(db, experiment, *node1_ids):
    """node1 evaluated every turn of EXPERIMENT (node2 was drained)."""
    rows = db.execute(
        "SELECT t.state, t.executor FROM tasks t JOIN experiments e ON e.rowid = t.experiment "
        "WHERE e.id = ? AND t.kind = ?", (experiment, EVAL)).fetchall()
    ids = set(" ".join(node1_ids).split())
    if not rows or any(state != DONE or executor not in ids for state, executor in rows):
        sys.exit(f"{experiment}: eval tasks (state, executor) {rows}, node1 is {ids}")


def consistent(db):
    """No turn lost or doubled, each completion accepted once, from the
    executor that held the lease it came under."""
    problems = []
    for tid, rowid, state, done, limit in db.execute(
            "SELECT id, rowid, state, turns_completed, num_turns FROM trajectories"):
        turns = [r[0] for r in db.execute(
            "SELECT turn FROM turns WHERE trajectory = ? AND state = 'done' ORDER BY turn",
            (rowid,))]
        # The target is out of reach: every trajectory runs all its turns.
        if state != LIMITS_EXCEEDED or done != limit or turns != list(range(limit)):
            problems.append(f"{tid}: state {state}, {done}/{limit} turns, turns {turns}")
    one_each = [
        # A turn with a kernel has one evaluation, a turn without none.
        ("turns whose result does not match their kernel",
         "SELECT count(*) FROM turns WHERE (kernel_blob IS NULL) != (eval_status IS NULL)"),
        ("turns answered other than once",
         "SELECT count(*) FROM turns u JOIN trajectories j ON j.rowid = u.trajectory WHERE "
         "(SELECT count(*) FROM events e WHERE e.trajectory = j.id AND e.turn = u.turn "
         "AND e.kind = 'turn.answered') != 1"),
        ("turns evaluated other than once (or without a kernel)",
         "SELECT count(*) FROM turns u JOIN trajectories j ON j.rowid = u.trajectory WHERE "
         "(SELECT count(*) FROM events e WHERE e.trajectory = j.id AND e.turn = u.turn "
         "AND e.kind = 'turn.evaluated') != (u.kernel_blob IS NOT NULL)"),
        ("tasks not done", f"SELECT count(*) FROM tasks WHERE state != {DONE}"),
        ("turns without their LLM task or evaluated without an eval task",
         f"SELECT count(*) FROM turns u WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE "
         f"t.trajectory = u.trajectory AND t.turn = u.turn AND t.kind = {LLM}) OR "
         f"(u.eval_status IS NOT NULL) != EXISTS (SELECT 1 FROM tasks t WHERE "
         f"t.trajectory = u.trajectory AND t.turn = u.turn AND t.kind = {EVAL})"),
    ]
    for what, sql in one_each:
        n = db.execute(sql).fetchone()[0]
        if n:
            problems.append(f"{n} {what}")
    # The completion of a task was accepted under its last lease: the
    # executor recorded with it is the one its last task.leased event names,
    # and it was leased once per attempt.
    for rowid, tid, turn, kind, attempt, executor in db.execute(
            "SELECT t.rowid, j.id, t.turn, t.kind, t.attempt, t.executor FROM tasks t "
            "JOIN trajectories j ON j.rowid = t.trajectory"):
        word = "llm" if kind == LLM else "eval"
        leases = [d for (d,) in db.execute(
            "SELECT detail FROM events WHERE kind = 'task.leased' AND trajectory = ? AND turn = ? "
            "AND detail LIKE ? ORDER BY id", (tid, turn, f"{word} attempt %"))]
        if len(leases) != attempt or not leases or not leases[-1].endswith(f" to {executor}"):
            problems.append(f"tk_{rowid}: attempt {attempt}, executor {executor}, leases {leases}")
    if problems:
        sys.exit("inconsistent database:\n  " + "\n  ".join(problems))
    print(f"consistent: {db.execute('SELECT count(*) FROM trajectories').fetchone()[0]} "
          f"trajectories, {db.execute('SELECT count(*) FROM turns').fetchone()[0]} turns, "
          f"{db.execute('SELECT count(*) FROM tasks').fetchone()[0]} tasks, each done once")


def evidence(db, cut, *logs):
    """What the scheduler recorded and the nodes logged about the cut tasks."""
    for t in cut_tasks(cut):
        print(f"{t['task_id']} ({t['trajectory']} turn {t['turn']}), node1's lease {t['lease_id']}:")
        for kind, detail in db.execute(
                "SELECT kind, detail FROM events WHERE trajectory = ? AND turn = ? AND "
                "kind IN ('task.leased', 'task.expired', 'turn.evaluated') ORDER BY id",
                (t["trajectory"], t["turn"])):
            print(f"  scheduler event {kind}: {detail}")
        for log in logs:
            with open(log) as f:
                for line in f:
                    if re.search(rf"task_id={t['task_id']}( |$)", line):
                        print(f"  {log.rsplit('/', 1)[-1]}: {line.rstrip()}")


def events(db):
    for row in db.execute("SELECT * FROM (SELECT id, trajectory, turn, kind, detail FROM events "
                          "ORDER BY id DESC LIMIT 40) ORDER BY id"):
        print(*row)


COMMANDS = {"cut-leases": cut_leases, "moved": moved, "snapshot": snapshot,
            "unchanged": unchanged, "refused-in-log": refused_in_log, "rejoined": rejoined,
            "consistent": consistent, "evidence": evidence, "events": events}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(COMMANDS)} ARGS... DATABASE")
    with connect(sys.argv[-1]) as connection:
        COMMANDS[sys.argv[1]](connection, *sys.argv[2:-1])
