# Adversarial submission for gemm_n7168_k5120 (issue 50, fallback suite): the
# product is computed by torch.matmul (cuBLAS) and copied into C; no Triton
# kernel runs at all. ptxbench must call it LIBRARY_FALLBACK and name the
# cuBLAS kernel, although the numbers are right.
import torch
import triton
import triton.language as tl


def run(A, B, C):
    C.copy_(torch.matmul(A, B.t()))
