# Adversarial submission for gemm_n7168_k5120 (issue 50, memcheck gate): an
# honest Triton GEMM whose store mask has a bug: it bounds the flat index
# row * N + col by M * N + 64 instead of bounding rows and columns, so the
# tiles of the bottom edge write the first 64 elements of row M, past the end
# of C (when M is not a multiple of 128; none for M = 8192). Every element of
# C is right, so the checks pass when those writes land in the allocation's
# padding; compute-sanitizer's memcheck must make the turn RUNTIME_ERROR.
import torch
import triton
import triton.language as tl


@triton.jit
def _gemm_abt(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr):
    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + tl.minimum(rows, M - 1)[:, None] * K + ks[None, :]
    b_tile = b_ptr + tl.minimum(cols, N - 1)[None, :] * K + ks[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_tile, mask=ks[None, :] < K - k0, other=0.0),
                     tl.load(b_tile, mask=ks[:, None] < K - k0, other=0.0), acc)
        a_tile += BLOCK_K
        b_tile += BLOCK_K
    flat = rows[:, None] * N + cols[None, :]
    # The bug: 64 elements of slack on a flat bound (N is a multiple of
    # BLOCK_N here, so no column runs over into the next row).
    tl.store(c_ptr + flat, acc.to(tl.bfloat16), mask=flat < M * N + 64)


def run(A, B, C):
    M, K = A.shape
    N = B.shape[0]
    _gemm_abt[(triton.cdiv(N, 128), triton.cdiv(M, 128))](
        A, B, C, M, N, K, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3)
