# Triton test kernel for mha_bwd_d128_causal: dQ, dK, dV of
# O = softmax(Q K^T / sqrt(128) + causal mask) V (query i sees keys j <= i)
# given O, dO and the forward's natural-log LSE L; tensors [B, H, S, 128]
# bfloat16, L [B, H, S] float32. Three kernels, no atomics:
#   delta   delta_i = sum_d dO_id * O_id, one float32 per query row (scratch);
#   dK/dV   one program per 128 keys of one (batch, head), walking the queries
#           in blocks of 64: P^T = exp(K Q^T * scale - L), dV += P^T dO,
#           dS^T = P^T * (V dO^T - delta), dK += dS^T Q;
#   dQ      one program per 128 queries, walking the keys in blocks of 64:
#           dS = P * (dO V^T - delta), dQ += dS K.
# Causal: each loop skips the blocks wholly masked and applies the mask only
# on the diagonal blocks. Exponentials in base 2 (scores and L scaled by
# log2(e)). Any S: rows and keys past S are masked.
import math

import torch
import triton
import triton.language as tl

CAUSAL = True
LOG2E = 1.4426950408889634


@triton.jit
def _bwd_delta(o_ptr, do_ptr, delta_ptr, n_rows, HEAD_D: tl.constexpr, BLOCK_R: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    ok = rows < n_rows
    offs = rows.to(tl.int64)[:, None] * HEAD_D + tl.arange(0, HEAD_D)[None, :]
    o = tl.load(o_ptr + offs, mask=ok[:, None], other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offs, mask=ok[:, None], other=0.0).to(tl.float32)
    tl.store(delta_ptr + rows, tl.sum(o * do, 1), mask=ok)


@triton.jit
def _dkdv_query_blocks(dk, dv, k, v, q_base, do_base, l_base, delta_base, keys, q_lo, q_hi, S,
                       qk_scale, BLOCK_M: tl.constexpr, HEAD_D: tl.constexpr,
                       CAUSAL_MASK: tl.constexpr):
    dims = tl.arange(0, HEAD_D)
    for start in range(q_lo, q_hi, BLOCK_M):
        qb = tl.multiple_of(start, BLOCK_M)
        rows = qb + tl.arange(0, BLOCK_M)
        row_ok = rows < S
        offs = rows[:, None] * HEAD_D + dims[None, :]
        q = tl.load(q_base + offs, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_base + offs, mask=row_ok[:, None], other=0.0)
        l2 = tl.load(l_base + rows, mask=row_ok, other=0.0) * 1.4426950408889634
        delta = tl.load(delta_base + rows, mask=row_ok, other=0.0)
        p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - l2[None, :])  # [BLOCK_N, BLOCK_M]
        keep = row_ok[None, :]
        if CAUSAL_MASK:
            keep = keep & (rows[None, :] >= keys[:, None])
        p_t = tl.where(keep, p_t, 0.0)
        dv = tl.dot(p_t.to(tl.bfloat16), do, dv)
        dp_t = tl.dot(v, tl.trans(do))  # [BLOCK_N, BLOCK_M]
        ds_t = p_t * (dp_t - delta[None, :])
        # dS in tf32, not bf16: a key seen by thousands of queries sums terms
        # that cancel, and bf16's 8 bits left one element in 10^8 past 1e-2.
        dk = tl.dot(ds_t, q.to(tl.float32), dk, input_precision="tf32")
    return dk, dv


@triton.jit
def _bwd_dkdv(q_ptr, k_ptr, v_ptr, do_ptr, l_ptr, delta_ptr, dk_ptr, dv_ptr, S, qk_scale,
              sm_scale, HEAD_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              CAUSAL: tl.constexpr):
    kb = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * HEAD_D
    keys = kb + tl.arange(0, BLOCK_N)
    key_ok = keys < S
    offs = keys[:, None] * HEAD_D + tl.arange(0, HEAD_D)[None, :]
    k = tl.load(k_ptr + base + offs, mask=key_ok[:, None], other=0.0)
    v = tl.load(v_ptr + base + offs, mask=key_ok[:, None], other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_D], dtype=tl.float32)
    q_base, do_base = q_ptr + base, do_ptr + base
    l_base, delta_base = l_ptr + bh * S, delta_ptr + bh * S
    if CAUSAL:
        # Queries below kb see none of these keys; those in [kb, kb + BLOCK_N)
        # some (masked); those from kb + BLOCK_N on, all of them.
        dk, dv = _dkdv_query_blocks(dk, dv, k, v, q_base, do_base, l_base, delta_base, keys,
                                    kb, tl.minimum(kb + BLOCK_N, S), S, qk_scale,
                                    BLOCK_M, HEAD_D, True)
        dk, dv = _dkdv_query_blocks(dk, dv, k, v, q_base, do_base, l_base, delta_base, keys,
                                    kb + BLOCK_N, S, S, qk_scale, BLOCK_M, HEAD_D, False)
    else:
        dk, dv = _dkdv_query_blocks(dk, dv, k, v, q_base, do_base, l_base, delta_base, keys,
                                    0, S, S, qk_scale, BLOCK_M, HEAD_D, False)
    tl.store(dk_ptr + base + offs, (dk * sm_scale).to(tl.bfloat16), mask=key_ok[:, None])
    tl.store(dv_ptr + base + offs, dv.to(tl.bfloat16), mask=key_ok[:, None])


@triton.jit
def _dq_key_blocks(dq, q, do, l2, delta, k_base, v_base, rows, k_lo, k_hi, S, qk_scale,
                   BLOCK_N: tl.constexpr, HEAD_D: tl.constexpr, CAUSAL_MASK: tl.constexpr):
    dims = tl.arange(0, HEAD_D)
    for start in range(k_lo, k_hi, BLOCK_N):
        kb = tl.multiple_of(start, BLOCK_N)
        keys = kb + tl.arange(0, BLOCK_N)
        key_ok = keys < S
        offs = keys[:, None] * HEAD_D + dims[None, :]
        k = tl.load(k_base + offs, mask=key_ok[:, None], other=0.0)
        v = tl.load(v_base + offs, mask=key_ok[:, None], other=0.0)
        p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - l2[:, None])  # [BLOCK_M, BLOCK_N]
        keep = key_ok[None, :]
        if CAUSAL_MASK:
            keep = keep & (rows[:, None] >= keys[None, :])
        p = tl.where(keep, p, 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds, k.to(tl.float32), dq, input_precision="tf32")  # as dK above
    return dq


@triton.jit
def _bwd_dq(q_ptr, k_ptr, v_ptr, do_ptr, l_ptr, delta_ptr, dq_ptr, S, qk_scale, sm_scale,
            HEAD_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
            CAUSAL: tl.constexpr):
    qb = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * HEAD_D
    rows = qb + tl.arange(0, BLOCK_M)
    row_ok = rows < S
    offs = rows[:, None] * HEAD_D + tl.arange(0, HEAD_D)[None, :]
    q = tl.load(q_ptr + base + offs, mask=row_ok[:, None], other=0.0)
    do = tl.load(do_ptr + base + offs, mask=row_ok[:, None], other=0.0)
    l2 = tl.load(l_ptr + bh * S + rows, mask=row_ok, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + bh * S + rows, mask=row_ok, other=0.0)
    dq = tl.zeros([BLOCK_M, HEAD_D], dtype=tl.float32)
    if CAUSAL:
        # Keys below qb are seen by every row of the block; those in
        # [qb, qb + BLOCK_M) need the mask; later ones by none.
        dq = _dq_key_blocks(dq, q, do, l2, delta, k_ptr + base, v_ptr + base, rows, 0, qb, S,
                            qk_scale, BLOCK_N, HEAD_D, False)
        dq = _dq_key_blocks(dq, q, do, l2, delta, k_ptr + base, v_ptr + base, rows, qb,
                            tl.minimum(qb + BLOCK_M, S), S, qk_scale, BLOCK_N, HEAD_D, True)
    else:
        dq = _dq_key_blocks(dq, q, do, l2, delta, k_ptr + base, v_ptr + base, rows, 0, S, S,
                            qk_scale, BLOCK_N, HEAD_D, False)
    tl.store(dq_ptr + base + offs, (dq * sm_scale).to(tl.bfloat16), mask=row_ok[:, None])


def run(Q, K, V, O, dO, L, dQ, dK, dV):
    B, H, S, D = Q.shape
    sm_scale = 1.0 / math.sqrt(D)
    qk_scale = sm_scale * LOG2E
    delta = torch.empty((B, H, S), dtype=torch.float32, device=Q.device)  # scratch
    n_rows = B * H * S
    _bwd_delta[(triton.cdiv(n_rows, 64),)](O, dO, delta, n_rows, HEAD_D=D, BLOCK_R=64,
                                           num_warps=4)
    _bwd_dkdv[(triton.cdiv(S, 128), B * H)](Q, K, V, dO, L, delta, dK, dV, S, qk_scale, sm_scale,
                                            HEAD_D=D, BLOCK_M=64, BLOCK_N=128, CAUSAL=CAUSAL,
                                            num_warps=8, num_stages=2)
    _bwd_dq[(triton.cdiv(S, 128), B * H)](Q, K, V, dO, L, delta, dQ, S, qk_scale, sm_scale,
                                          HEAD_D=D, BLOCK_M=128, BLOCK_N=64, CAUSAL=CAUSAL,
                                          num_warps=8, num_stages=2)
    # PTXB_TEST_SPOIL
