# Adversarial submission for gemm_n7168_k5120 (issue 50, fallback suite): a
# @triton.jit GEMM is defined, so the source looks like a Triton kernel, but
# run() never launches it and uses torch.matmul (cuBLAS) instead.
# LIBRARY_FALLBACK naming the cuBLAS kernel.
import torch
import triton
import triton.language as tl


@triton.jit
def _gemm_abt(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * K + k0 + ks[None, :],
                    mask=(rows[:, None] < M) & (k0 + ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + cols[None, :] * K + k0 + ks[:, None],
                    mask=(cols[None, :] < N) & (k0 + ks[:, None] < K), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.bfloat16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def run(A, B, C):
    # The kernel above would be launched as
    #   _gemm_abt[(triton.cdiv(M, 64), triton.cdiv(N, 64))](A, B, C, M, N, K, 64, 64)
    # but it is not.
    C.copy_(torch.matmul(A, B.t()))
