#!/usr/bin/env python3
"""Checks the bundled PyTorch references against PyTorch's own operators.

Each definition's `reference` is executed and compared, at reduced shapes,
with torch.matmul (GEMM), scaled_dot_product_attention plus an explicit
log-sum-exp (forward) and autograd through the forward (backward). With
--full it also runs every bundled workload at its real shape once, to show the
references fit in device memory. Needs PyTorch and a CUDA device.

    python3 workloads/tools/check_references.py [--full]
"""
import argparse
import glob
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

DATA = os.path.join(os.path.dirname(__file__), "..", "data")


def load():
    defs = {}
    for path in glob.glob(os.path.join(DATA, "definitions", "*", "*.json")):
        with open(path) as f:
            d = json.load(f)
        scope = {}
        exec(compile(d["reference"], path, "exec"), scope)
        d["run"] = scope["run"]
        defs[d["name"]] = d
    return defs


def close(name, got, want, atol=1e-2, rtol=1e-2):
    got, want = got.float(), want.float()
    err = (got - want).abs()
    bad = (err > atol) & (err / (want.abs() + 1e-8) > rtol)
    print(f"  {name}: max_abs={err.max().item():.3e} mismatched={bad.sum().item()}"
          f"/{bad.numel()}")
    return bad.sum().item() == 0


def check_gemm(d, M=300):
    N, K = 7168, 5120
    A = torch.randn(M, K, device="cuda").bfloat16()
    B = torch.randn(N, K, device="cuda").bfloat16()
    C = torch.full((M, N), float("nan"), device="cuda").bfloat16()
    d["run"](A, B, C)
    return close("C", C, (A.double() @ B.double().t()))


def forward_truth(Q, K, V, causal):
    scale = 1.0 / math.sqrt(Q.shape[-1])
    s = (Q.double() @ K.double().transpose(-2, -1)) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1),
                          float("-inf"))
    return torch.logsumexp(s, dim=-1)


def check_forward(d, causal, B=2, H=3, S=384, D=128):
    Q, K, V = (torch.randn(B, H, S, D, device="cuda").bfloat16() for _ in range(3))
    O = torch.full((B, H, S, D), float("nan"), device="cuda").bfloat16()
    LSE = torch.full((B, H, S), float("nan"), device="cuda")
    d["run"](Q, K, V, O, LSE)
    ref = F.scaled_dot_product_attention(Q.float(), K.float(), V.float(), is_causal=causal)
    return close("O", O, ref) & close("LSE", LSE, forward_truth(Q, K, V, causal))


def check_backward(d, causal, B=2, H=3, S=384, D=128):
    Q, K, V, dO = (torch.randn(B, H, S, D, device="cuda").bfloat16() for _ in range(4))
    q, k, v = (t.float().requires_grad_() for t in (Q, K, V))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out.backward(dO.float())
    O = out.detach().bfloat16()
    L = forward_truth(Q, K, V, causal).float()
    grads = [torch.full((B, H, S, D), float("nan"), device="cuda").bfloat16()
             for _ in range(3)]
    d["run"](Q, K, V, O, dO, L, *grads)
    ok = True
    for name, got, want in zip(("dQ", "dK", "dV"), grads, (q.grad, k.grad, v.grad)):
        ok &= close(name, got, want, atol=2e-2, rtol=2e-2)
    return ok


def full_shapes(d):
    """Runs each workload once at its real shape (memory and time check)."""
    var = [a for a, spec in d["axes"].items() if spec["type"] == "var"][0]
    lines = open(os.path.join(DATA, "workloads", d["op_type"], d["name"] + ".jsonl"))
    for line in lines:
        axes = {a: spec.get("value") for a, spec in d["axes"].items()}
        axes.update(json.loads(line)["workload"]["axes"])
        args = []
        for group in ("inputs", "outputs"):
            for t in d[group].values():
                dtype = getattr(torch, t["dtype"])
                args.append(torch.randn(*[axes[a] for a in t["shape"]], device="cuda")
                            .to(dtype))
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        d["run"](*args)
        end.record()
        torch.cuda.synchronize()
        print(f"  {var}={axes[var]}: {start.elapsed_time(end):.1f} ms, peak "
              f"{torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")
        del args
        torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    defs = load()
    checks = {
        "gemm_n7168_k5120": lambda d: check_gemm(d),
        "mha_with_lse_d128": lambda d: check_forward(d, False),
        "mha_with_lse_d128_causal": lambda d: check_forward(d, True),
        "mha_bwd_d128": lambda d: check_backward(d, False),
        "mha_bwd_d128_causal": lambda d: check_backward(d, True),
    }
    ok = True
    for name, check in checks.items():
        print(name)
        ok &= bool(check(defs[name]))
        if args.full:
            full_shapes(defs[name])
    print("all references match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
