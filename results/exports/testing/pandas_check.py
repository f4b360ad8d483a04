"""Reads a csv export and a jsonl export of the same trajectories with pandas,
with no options, and checks row counts and column types.

Usage: pandas_check.py CSV_DIR JSONL_DIR TURNS WORKLOADS
Exits 0 when they match, 1 (saying what differs) when not, and 77 (the
test's skip code) when this Python has no pandas.
"""

import sys

try:
    import pandas as pd
    from pandas.api import types
except ImportError:
    print(f"pandas is not installed for {sys.executable} (Debian: python3-pandas)")
    sys.exit(77)

csv_dir, jsonl_dir, want_turns, want_workloads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

# Column -> the kind of dtype pandas must infer on its own.
TURNS = {
    "experiment_id": "string", "experiment": "string", "trajectory_id": "string",
    "model": "string", "definition": "string", "tag": "string", "sample": "integer",
    "turn": "integer", "state": "string", "trajectory_state": "string", "status": "string",
    "correct": "bool", "speedup": "float", "min_speedup": "float", "input_tokens": "integer",
    "output_tokens": "integer", "reasoning_tokens": "integer", "cached_tokens": "integer",
    "cost_usd": "float", "model_latency_ms": "integer", "eval_ms": "number",
    "started_unix_ms": "integer", "finished_unix_ms": "number", "provider": "string",
    "simulated": "bool", "kernel_sha256": "string",
}
WORKLOADS = {
    "experiment_id": "string", "experiment": "string", "trajectory_id": "string",
    "model": "string", "definition": "string", "tag": "string", "sample": "integer",
    "turn": "integer", "kernel_sha256": "string", "workload_uuid": "string",
    "axes": "object", "status": "string", "latency_ms": "float",
    "reference_latency_ms": "float", "speedup": "float", "reference": "string",
    "max_abs_error": "float", "max_rel_error": "float", "matched_ratio": "float",
    "roofline_fraction": "float", "errors": "object", "simulated": "bool",
}

CHECKS = {
    "string": types.is_object_dtype,
    "object": types.is_object_dtype,
    "integer": types.is_integer_dtype,
    "float": types.is_float_dtype,
    "number": lambda d: types.is_numeric_dtype(d) and not types.is_bool_dtype(d),
    "bool": types.is_bool_dtype,
}

problems = []


def check(name, frame, want_rows, columns):
    if len(frame) != want_rows:
        problems.append(f"{name}: {len(frame)} rows, expected {want_rows}")
    if list(frame.columns) != list(columns):
        problems.append(f"{name}: columns {list(frame.columns)}, expected {list(columns)}")
        return
    for column, kind in columns.items():
        if not CHECKS[kind](frame[column].dtype):
            problems.append(f"{name}: column {column} has dtype {frame[column].dtype}, expected {kind}")


check("turns.csv", pd.read_csv(f"{csv_dir}/turns.csv"), want_turns, TURNS)
check("workloads.csv", pd.read_csv(f"{csv_dir}/workloads.csv"), want_workloads, WORKLOADS)
turns = pd.read_json(f"{jsonl_dir}/turns.jsonl", lines=True)
check("turns.jsonl", turns, want_turns, TURNS)
workloads = pd.read_json(f"{jsonl_dir}/workloads.jsonl", lines=True)
check("workloads.jsonl", workloads, want_workloads, WORKLOADS)
if not problems:
    if not all(isinstance(a, dict) for a in workloads["axes"]):
        problems.append("workloads.jsonl: axes are not objects")
    if not all(isinstance(e, list) for e in workloads["errors"]):
        problems.append("workloads.jsonl: errors are not lists")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
