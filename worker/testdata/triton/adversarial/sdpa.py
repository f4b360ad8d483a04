# Adversarial submission for mha_with_lse_d128 (issue 50, fallback suite): O
# from torch's scaled_dot_product_attention (cuDNN or flash attention) and the
# LSE from torch.logsumexp over float32 scores made with torch.matmul, one
# batch at a time; no Triton kernel runs. LIBRARY_FALLBACK naming the SDPA and
# GEMM kernels.
import math

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


def run(Q, K, V, O, LSE):
    O.copy_(F.scaled_dot_product_attention(Q, K, V))
    scale = 1.0 / math.sqrt(Q.shape[-1])
    for b in range(Q.shape[0]):
        scores = torch.matmul(Q[b].float(), K[b].float().transpose(-2, -1)) * scale
        LSE[b].copy_(torch.logsumexp(scores, dim=-1))
