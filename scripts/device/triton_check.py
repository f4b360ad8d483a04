#!/usr/bin/env python3
"""Developer tool for the GPU machine (PyTorch and Triton installed, one GPU):
checks the Triton test kernels of worker/testdata/triton against their
definitions' own references and times both, outside ptxbench.

For each kernel file (worker/testdata/triton/*.py, or --dir), it loads the
module, makes random inputs of the definition's shapes for a few of its
workloads (standard normal rounded to the dtype, as the harness draws them;
for the attention backward, O and L come from the forward definition's
reference for the same Q, K, V), runs the definition's `reference` and the
kernel's destination-passing run() into outputs filled with NaN and followed
by a guard region, and compares them with the definition's tolerance (the
harness's rule: an element fails when its error, less one unit in the last
place of the expected value for 16-bit outputs, exceeds both atol and
rtol * |expected|; NaN/Inf fail). It also checks that no input changed and
that nothing was written into the guard past an output's end.
Then it times run() and the reference with
triton.testing.do_bench(warmup=25, rep=100), median. One line per
(kernel, workload); exit status 1 when any fails.

    python3 scripts/device/triton_check.py [--only NAME[,NAME...]] [--dir DIR] [--ncu NCU]

With --ncu, each (kernel, workload) of a bundled shape is also timed by Nsight Compute
(another process: ncu --clock-control none --cache-control all, gpu__time_duration.sum of
every kernel launched inside NCU_CALLS calls of run(), summed per call, median): the GPU
at its own clocks and a cold L2 before each kernel, as ptxbench times it, where do_bench
runs the calls back to back (so a kernel that heats the card reads at the clocks the card
holds under sustained load).

Workloads (about 1.5 minutes in all on an H100, most of it the float32
references and the JIT): gemm M = 70, 2379, 8192; gemm_autotune M = 70, 8192;
mha_with_lse_d128 S = 2048, 4096; the causal forward and both backward
passes S = 4096; and for each attention kernel a synthetic S = 1000 (not a
bundled workload: it exercises the masks of a length no block size divides).
"""
import argparse
import csv
import glob
import io
import statistics
import subprocess
import importlib.util
import json
import os
import sys
import time
import traceback

sys.dont_write_bytecode = True

import torch  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "workloads", "data")
DEFAULT_DIR = os.path.join(ROOT, "worker", "testdata", "triton")
GUARD = 4096  # elements after each output, filled with NaN, that must stay NaN
NCU_CALLS = 7  # calls of run() the profiler times, after one untimed (the JIT's)

# Kernel file -> (definition, the workloads' var axes to run). A None entry
# of axes marks a synthetic shape (not a bundled workload). Files not listed
# run the definition of their own name at its first two workloads.
PLAN = {
    "gemm": ("gemm_n7168_k5120", [{"M": 70}, {"M": 2379}, {"M": 8192}]),
    "gemm_autotune": ("gemm_n7168_k5120", [{"M": 70}, {"M": 8192}]),
    "mha_with_lse_d128": ("mha_with_lse_d128", [{"S": 2048}, {"S": 4096}, {"S": 1000}]),
    "mha_with_lse_d128_causal": ("mha_with_lse_d128_causal", [{"S": 4096}, {"S": 1000}]),
    "mha_bwd_d128": ("mha_bwd_d128", [{"S": 4096}, {"S": 1000}]),
    "mha_bwd_d128_causal": ("mha_bwd_d128_causal", [{"S": 4096}, {"S": 1000}]),
    # worker/testdata/triton/adversarial (--dir): numerically right, all of
    # them, apart from what ptxbench must see (fallbacks, an OOB write).
    "torch_matmul": ("gemm_n7168_k5120", [{"M": 972}]),
    "defined_not_launched": ("gemm_n7168_k5120", [{"M": 972}]),
    "scratch_empty": ("gemm_n7168_k5120", [{"M": 70}, {"M": 972}]),
    "oob_write": ("gemm_n7168_k5120", [{"M": 70}]),
    "sdpa": ("mha_with_lse_d128", [{"S": 2048}]),
    "compiled_reference": ("mha_with_lse_d128", [{"S": 2048}]),
}
# Backward definitions whose O and L inputs are the forward's outputs.
FORWARD_OF = {"mha_bwd_d128": "mha_with_lse_d128",
              "mha_bwd_d128_causal": "mha_with_lse_d128_causal"}

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32,
          "float64": torch.float64, "int32": torch.int32, "int64": torch.int64,
          "int8": torch.int8, "bool": torch.bool,
          "float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2}
# Significant bits and smallest normal exponent of the 16-bit float dtypes
# (worker/runner/measure/checks.cu, Ulp): the one-step allowance of the harness.
STEP = {torch.bfloat16: (8, -126), torch.float16: (11, -14)}


def load_definitions():
    defs = {}
    for path in glob.glob(os.path.join(DATA, "definitions", "*", "*.json")):
        with open(path) as f:
            d = json.load(f)
        scope = {}
        exec(compile(d["reference"], f"<reference {d['name']}>", "exec"), scope)
        d["reference_run"] = scope["run"]
        d["workloads"] = []
        jsonl = os.path.join(DATA, "workloads", d["op_type"], d["name"] + ".jsonl")
        if os.path.exists(jsonl):
            with open(jsonl) as f:
                d["workloads"] = [json.loads(line)["workload"] for line in f if line.strip()]
        defs[d["name"]] = d
    return defs


def load_kernel(path):
    name = "ptxb_triton_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def shape_of(d, axes, dims):
    values = {n: a["value"] for n, a in d["axes"].items() if a["type"] == "const"}
    values.update(axes)
    return [values[x] if isinstance(x, str) else int(x) for x in dims]


def random_tensor(shape, dtype, gen):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, device="cuda", generator=gen).bool()
    if not dtype.is_floating_point:
        lo, hi = (-128, 128) if dtype == torch.int8 else (-1024, 1024)
        return torch.randint(lo, hi, shape, device="cuda", generator=gen).to(dtype)
    x = torch.randn(shape, device="cuda", generator=gen)
    if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        x = x.clamp(-2, 2)
    return x.to(dtype)


def make_inputs(defs, d, axes, seed):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    inputs = {n: random_tensor(shape_of(d, axes, spec["shape"]), DTYPES[spec["dtype"]], gen)
              for n, spec in d["inputs"].items()}
    forward = FORWARD_OF.get(d["name"])
    if forward is not None:
        o, lse = as_tuple(defs[forward]["reference_run"](inputs["Q"], inputs["K"], inputs["V"]))
        inputs["O"], inputs["L"] = o, lse
    return [inputs[n] for n in d["inputs"]]


def as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def guarded_empty(shape, dtype):
    """An output tensor (contiguous) followed by GUARD elements in the same
    allocation; returns (tensor, whole buffer)."""
    n = 1
    for s in shape:
        n *= s
    whole = torch.empty(n + GUARD, dtype=dtype, device="cuda")
    return whole[:n].view(shape), whole


def poison(whole):
    if whole.dtype.is_floating_point and whole.element_size() >= 2:
        whole.fill_(float("nan"))
    else:
        whole.fill_(-1 if whole.dtype != torch.bool else True)


def guard_hits(whole, n):
    g = whole[n:]
    if whole.dtype.is_floating_point and whole.element_size() >= 2:
        return int((~torch.isnan(g)).sum().item())
    return int((g != (-1 if whole.dtype != torch.bool else True)).sum().item())


def compare(actual, expected, tol):
    """The harness's check (worker/runner/measure/checks.cu) in torch: returns
    (max_abs_error, matched, total, nonfinite)."""
    x, y = actual.float().flatten(), expected.to(actual.dtype).float().flatten()
    finite = torch.isfinite(x) & torch.isfinite(y)
    err = torch.where(finite, (x - y).abs(), torch.zeros_like(x))
    judged = err
    if actual.dtype in STEP:
        bits, min_exp = STEP[actual.dtype]
        exponent = ((y.view(torch.int32) >> 23) & 0xFF) - 127
        step = torch.pow(2.0, (exponent.clamp(min=min_exp) - (bits - 1)).float())
        judged = (err - step).clamp(min=0)
    bad = (judged > tol["atol"]) & (judged / (y.abs() + 1e-8) > tol["rtol"])
    matched = int((finite & ~bad).sum().item())
    return err.max().item(), matched, x.numel(), int((~finite).sum().item())


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def outputs_for(d, axes):
    return [torch.empty(shape_of(d, axes, spec["shape"]), dtype=DTYPES[spec["dtype"]],
                        device="cuda") for spec in d["outputs"].values()]


def ncu_target(defs, d, module, axes):
    """The profiled process: one untimed call, then NCU_CALLS calls, each in an NVTX range
    that the profiler's filter keeps."""
    inputs = make_inputs(defs, d, axes, seed=7)
    outs = outputs_for(d, axes)
    module.run(*inputs, *outs)
    torch.cuda.synchronize()
    for i in range(NCU_CALLS):
        torch.cuda.nvtx.range_push(f"ptxb_call_{i}")
        module.run(*inputs, *outs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


def ncu_ms(ncu, path, axes):
    """(median ms per call, kernels per call) of run() under Nsight Compute, or a reason."""
    cmd = [ncu, "--clock-control", "none", "--cache-control", "all", "--target-processes", "all",
           "--metrics", "gpu__time_duration.sum", "--csv", "--nvtx", "--print-nvtx-rename", "none"]
    for i in range(NCU_CALLS):
        cmd += ["--nvtx-include", f"ptxb_call_{i}/"]
    cmd += [sys.executable, os.path.abspath(__file__), "--ncu-target", path, json.dumps(axes)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    table = "\n".join(line for line in run.stdout.splitlines() if line.startswith('"'))
    rows = [r for r in csv.DictReader(io.StringIO(table))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    if run.returncode != 0 or not rows:
        return None, f"ncu rc {run.returncode}: {(run.stderr or run.stdout)[-300:]}"
    scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
             "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    times = [float(r["Metric Value"].replace(",", "")) * scale.get(r["Metric Unit"], float("nan"))
             for r in rows]
    if len(times) % NCU_CALLS:
        return None, f"{len(times)} kernels in {NCU_CALLS} calls"
    per = len(times) // NCU_CALLS
    calls = [sum(times[i * per:(i + 1) * per]) for i in range(NCU_CALLS)]
    return statistics.median(calls), per


def check_one(defs, d, module, axes, seed):
    """Returns (passed, line, the kernel's do_bench ms)."""
    inputs = make_inputs(defs, d, axes, seed)
    saved = [t.clone() for t in inputs]
    outs, wholes = [], []
    for spec in d["outputs"].values():
        t, whole = guarded_empty(shape_of(d, axes, spec["shape"]), DTYPES[spec["dtype"]])
        poison(whole)
        outs.append(t)
        wholes.append(whole)
    torch.cuda.synchronize()
    start = time.time()
    module.run(*inputs, *outs)  # the first call: JIT and autotuning included
    torch.cuda.synchronize()
    first_s = time.time() - start
    expected = as_tuple(d["reference_run"](*inputs))
    problems, errs = [], []
    for name, out, whole, want in zip(d["outputs"], outs, wholes, expected):
        max_err, matched, total, nonfinite = compare(out, want, d["tolerance"])
        errs.append(f"{name} {max_err:.2e}")
        if nonfinite:
            problems.append(f"{name}: {nonfinite} NaN/Inf (unwritten?)")
        if matched < d["tolerance"]["required_matched_ratio"] * total:
            problems.append(f"{name}: {total - matched} of {total} out of tolerance")
        hits = guard_hits(whole, out.numel())
        if hits:
            problems.append(f"{name}: {hits} elements written past its end")
    for name, before, after in zip(d["inputs"], saved, inputs):
        if not torch.equal(before, after):
            problems.append(f"input {name} changed")
    del saved, expected
    kernel_ms = bench(lambda: module.run(*inputs, *outs))
    reference_ms = bench(lambda: d["reference_run"](*inputs))
    verdict = "PASS" if not problems else "FAIL"
    line = (f"max abs err {', '.join(errs)}; {verdict}; kernel {kernel_ms:.3f} ms, "
            f"reference {reference_ms:.3f} ms; first call {first_s:.1f} s")
    if problems:
        line += "; " + "; ".join(problems)
    return not problems, line, kernel_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="kernel file names (without .py), comma-separated")
    parser.add_argument("--dir", default=DEFAULT_DIR, help="folder of kernel files")
    parser.add_argument("--ncu", help="Nsight Compute's ncu: time each bundled shape with it too")
    parser.add_argument("--ncu-target", nargs=2, metavar=("KERNEL", "AXES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    defs = load_definitions()
    if args.ncu_target:
        path, axes = args.ncu_target[0], json.loads(args.ncu_target[1])
        stem = os.path.splitext(os.path.basename(path))[0]
        ncu_target(defs, defs[PLAN.get(stem, (stem, None))[0]], load_kernel(path), axes)
        return
    paths = sorted(glob.glob(os.path.join(args.dir, "*.py")))
    if args.only:
        wanted = set(args.only.split(","))
        paths = [p for p in paths if os.path.splitext(os.path.basename(p))[0] in wanted]
        if not paths:
            sys.exit(f"no kernel named {args.only} in {args.dir}")
    print(f"torch {torch.__version__}, triton {triton.__version__}, "
          f"{torch.cuda.get_device_name()}", flush=True)
    failed = 0
    begin = time.time()
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        definition, picks = PLAN.get(stem, (stem, None))
        d = defs.get(definition)
        if d is None:
            print(f"{stem}: FAIL; no definition {definition}")
            failed += 1
            continue
        if picks is None:
            picks = [{n: v for n, v in w["axes"].items()} for w in d["workloads"][:2]]
        try:
            module = load_kernel(path)
        except Exception:  # noqa: BLE001 - reported, and the others still run
            print(f"{stem}: FAIL; import: {traceback.format_exc(limit=3)}")
            failed += 1
            continue
        bundled = [w["axes"] for w in d["workloads"]]
        for i, axes in enumerate(picks):
            label = ", ".join(f"{k}={v}" for k, v in axes.items())
            if axes not in bundled:
                label += " (synthetic)"
            try:
                ok, line, kernel_ms = check_one(defs, d, module, axes, seed=1000 + i)
            except Exception:  # noqa: BLE001
                ok, kernel_ms = False, 0
                line = "FAIL; " + traceback.format_exc(limit=4).replace("\n", " | ")
            failed += not ok
            # Where ptxbench's figure is compared (0.2 ms and more; a little less by do_bench).
            if args.ncu and axes in bundled and kernel_ms >= 0.15:
                try:
                    ms, per = ncu_ms(args.ncu, path, axes)
                except Exception:  # noqa: BLE001
                    ms, per = None, traceback.format_exc(limit=2).replace("\n", " | ")
                line += (f"; ncu {ms:.3f} ms ({per} kernels a call)" if ms is not None
                         else f"; ncu: {per}")
            print(f"{stem} [{label}]: {line}", flush=True)
            torch.cuda.empty_cache()
    print(f"{failed} failed; {time.time() - begin:.0f} s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
