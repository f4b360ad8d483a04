# Triton test kernel for mha_with_lse_d128_causal: O = softmax(Q K^T / sqrt(128)
# + causal mask) V (query i sees keys j <= i) and LSE = logsumexp of the scaled,
# masked scores (natural log, float32), Q, K, V, O [B, H, S, 128] bfloat16,
# LSE [B, H, S]. One program per 128 queries of one (batch, head); keys in
# blocks of 64 with an online softmax kept in base 2 (scores scaled by
# log2(e) / sqrt(128), exp2 for the exponentials, the LSE turned back into
# natural log at the end). Key blocks wholly below the query block run without
# the mask, the diagonal ones with it, those above are skipped. Any S.
import math

import torch
import triton
import triton.language as tl

CAUSAL = True


@triton.jit
def _fwd_key_blocks(acc, l_i, m_i, q, k_base, v_base, rows, key_lo, key_hi, S, qk_scale,
                    BLOCK_N: tl.constexpr, HEAD_D: tl.constexpr, CAUSAL_MASK: tl.constexpr):
    dims = tl.arange(0, HEAD_D)
    for start in range(key_lo, key_hi, BLOCK_N):
        kb = tl.multiple_of(start, BLOCK_N)
        keys = kb + tl.arange(0, BLOCK_N)
        key_ok = keys < S
        kv_offs = keys[:, None] * HEAD_D + dims[None, :]
        k = tl.load(k_base + kv_offs, mask=key_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_M, BLOCK_N], log2 units
        keep = key_ok[None, :]
        if CAUSAL_MASK:
            keep = keep & (rows[:, None] >= keys[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + kv_offs, mask=key_ok[:, None], other=0.0)
        acc = tl.dot(p.to(tl.bfloat16), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, S, qk_scale,
              HEAD_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              CAUSAL: tl.constexpr):
    qb = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * HEAD_D
    rows = qb + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_D)
    row_ok = rows < S
    q_offs = rows[:, None] * HEAD_D + dims[None, :]
    q = tl.load(q_ptr + base + q_offs, mask=row_ok[:, None], other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_D], dtype=tl.float32)
    # Every query row sees key 0 in the first block it processes, so the
    # running max is finite from then on and no exp2(-inf - -inf) arises.
    if CAUSAL:
        # Keys below qb are visible to every row of the block; those in
        # [qb, qb + BLOCK_M) need the causal mask.
        acc, l_i, m_i = _fwd_key_blocks(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, rows,
                                        0, qb, S, qk_scale, BLOCK_N, HEAD_D, False)
        acc, l_i, m_i = _fwd_key_blocks(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, rows,
                                        qb, tl.minimum(qb + BLOCK_M, S), S, qk_scale,
                                        BLOCK_N, HEAD_D, True)
    else:
        acc, l_i, m_i = _fwd_key_blocks(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, rows,
                                        0, S, S, qk_scale, BLOCK_N, HEAD_D, False)
    # sum_j e^{x_j} = 2^{m_i} * l_i, so ln of it is (m_i + log2(l_i)) * ln(2).
    lse = (m_i + tl.log2(l_i)) * 0.6931471805599453
    tl.store(lse_ptr + bh * S + rows, lse, mask=row_ok)
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + q_offs, o.to(tl.bfloat16), mask=row_ok[:, None])


def run(Q, K, V, O, LSE):
    B, H, S, D = Q.shape
    qk_scale = 1.4426950408889634 / math.sqrt(D)
    block_m = 128
    grid = (triton.cdiv(S, block_m), B * H)
    _attn_fwd[grid](Q, K, V, O, LSE, S, qk_scale, HEAD_D=D, BLOCK_M=block_m, BLOCK_N=64,
                    CAUSAL=CAUSAL, num_warps=8, num_stages=3)
    # PTXB_TEST_SPOIL
