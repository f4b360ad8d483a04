# Triton test kernel for gemm_n7168_k5120: C[M, N] = A[M, K] @ B[N, K]^T,
# bfloat16 in, float32 accumulation, bfloat16 out. One program per
# 128 x 128 tile of C, K walked in steps of 64; programs are numbered so that
# GROUP_M consecutive ones share a band of B columns (better L2 reuse). Any
# M, N, K: rows, columns and the K tail are masked.
import torch
import triton
import triton.language as tl


@triton.jit
def _gemm_abt(a_ptr, b_ptr, c_ptr, M, N, K, stride_a, stride_b, stride_c,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Grouped order: a group is GROUP_M tile rows; inside it the program id
    # runs down the rows first, then across the columns.
    per_group = GROUP_M * tiles_n
    group_first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - group_first_m, GROUP_M)
    in_group = pid % per_group
    tile_m = group_first_m + in_group % group_rows
    tile_n = in_group // group_rows

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    # Rows and columns past the end read the last valid one instead (no mask
    # on those loads); only the store is masked.
    rows_in = tl.minimum(rows, M - 1)
    cols_in = tl.minimum(cols, N - 1)
    a_tile = a_ptr + rows_in[:, None] * stride_a + ks[None, :]  # [BLOCK_M, BLOCK_K]
    b_tile = b_ptr + cols_in[None, :] * stride_b + ks[:, None]  # [BLOCK_K, BLOCK_N] = B^T
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_left = K - k0
        a = tl.load(a_tile, mask=ks[None, :] < k_left, other=0.0)
        b = tl.load(b_tile, mask=ks[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K
        b_tile += BLOCK_K
    c_tile = c_ptr + rows[:, None] * stride_c + cols[None, :]
    tl.store(c_tile, acc.to(tl.bfloat16), mask=(rows[:, None] < M) & (cols[None, :] < N))


def run(A, B, C):
    M, K = A.shape
    N = B.shape[0]
    block_m, block_n = 128, 128
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)
    _gemm_abt[grid](A, B, C, M, N, K, A.stride(0), B.stride(0), C.stride(0),
                    BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=64, GROUP_M=8,
                    num_warps=8, num_stages=4)
    # PTXB_TEST_SPOIL
