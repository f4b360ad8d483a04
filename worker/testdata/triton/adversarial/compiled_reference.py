# Adversarial submission for mha_with_lse_d128 (issue 50, fallback suite): the
# definition's reference computation, one batch at a time, through
# torch.compile. Inductor writes and JIT-compiles Triton kernels of its own
# (softmax, casts) in the candidate's process and calls cuBLAS for the
# products: none of that code is the submission's. LIBRARY_FALLBACK naming
# the cuBLAS kernels (and the Inductor kernels as not the submission's).
import math

import torch
import triton
import triton.language as tl


def _one_batch(q, k, v):
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * scale
    lse = torch.logsumexp(scores, dim=-1)
    probs = torch.exp(scores - lse.unsqueeze(-1))
    return torch.matmul(probs, v.float()).to(q.dtype), lse


_compiled = torch.compile(_one_batch)


def run(Q, K, V, O, LSE):
    for b in range(Q.shape[0]):
        o, lse = _compiled(Q[b], K[b], V[b])
        O[b].copy_(o)
        LSE[b].copy_(lse)
