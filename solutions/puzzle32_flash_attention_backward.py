import triton
import triton.language as tl

# The scores are handled in log2 units, so that exp2 (the GPU's native exponential) recomputes
# P: P = exp(S - L) = exp2(S * log2(e) - L * log2(e)).
LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _key_block_grads(dk, dv, k, v, keys, q_ptr, o_ptr, do_ptr, lse_ptr, q_head, lse_head, dims,
                     start, end, NQ, qk_scale, D: tl.constexpr, STEP: tl.constexpr,
                     MASKED: tl.constexpr):
    """dK and dV of one key block, from the queries start to end, STEP rows at a time.
    MASKED (a compile-time flag): these queries straddle the causal diagonal.

    Everything is computed transposed (keys along the rows): S^T = K Q^T comes out of the
    tensor cores with the layout that dV += P^T dO and dK += dS^T Q take as their first
    operand, so P and dS never have to be transposed in registers."""
    for block in range(start, end, STEP):
        rows = block + tl.arange(0, STEP)
        row_ok = rows < NQ
        qo = q_head + rows[:, None] * D + dims[None, :]
        # Rows past NQ load as 0 (and their lse as 0): their dO is 0, so they add nothing.
        q = tl.load(q_ptr + qo, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptr + qo, mask=row_ok[:, None], other=0.0)
        o = tl.load(o_ptr + qo, mask=row_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + lse_head + rows, mask=row_ok, other=0.0)
        d_i = tl.sum(do.to(tl.float32) * o.to(tl.float32), 1)
        p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - (lse * LOG2E)[None, :])
        if MASKED:
            p_t = tl.where(keys[:, None] <= rows[None, :], p_t, 0.0)
        dv += tl.dot(p_t.to(do.dtype), do)
        ds_t = p_t * (tl.dot(v, tl.trans(do)) - d_i[None, :])
        dk += tl.dot(ds_t.to(q.dtype), q)
    return dk, dv


@triton.jit
def _query_block_grad(dq, q, do, lse, d_i, rows, k_ptr, v_ptr, k_head, dims, start, end, NK, qk_scale,
                      D: tl.constexpr, STEP: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """dQ of one query block, from the keys start to end, STEP keys at a time.
    MASKED: these keys include hidden ones (the causal diagonal, or keys past NK)."""
    for block in range(start, end, STEP):
        keys = block + tl.arange(0, STEP)
        kv = k_head + keys[:, None] * D + dims[None, :]
        if MASKED:
            k = tl.load(k_ptr + kv, mask=keys[:, None] < NK, other=0.0)
            v = tl.load(v_ptr + kv, mask=keys[:, None] < NK, other=0.0)
        else:
            k = tl.load(k_ptr + kv)
            v = tl.load(v_ptr + kv)
        p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - (lse * LOG2E)[:, None])
        if MASKED:
            visible = (keys < NK)[None, :]
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
        ds = p * (tl.dot(do, tl.trans(v)) - d_i[:, None])
        dq += tl.dot(ds.to(k.dtype), k)
    return dq


@triton.jit
def attention_bwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, do_ptr, dq_ptr, dk_ptr, dv_ptr, NQ, NK,
                         D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    j = tl.program_id(0)
    bh = tl.program_id(1)
    dims = tl.arange(0, D)
    q_head = bh * NQ * D  # the offsets of this head in q, o, do (and dq), and in k, v
    k_head = bh * NK * D
    lse_head = bh * NQ
    scale = 1.0 / tl.sqrt(D * 1.0)
    qk_scale = scale * LOG2E
    key_blocks = tl.cdiv(NK, BK)
    # A program keeps its own block in registers (dK and dV: two BK x D fp32 tiles) and walks
    # the other side in steps of half a block: with blocks of 128, the score tiles are 128 x 64,
    # small enough to keep beside the accumulators (on an H200 at 4 x 16 x 4096, d 128: 3.9 ms,
    # against 4.5 ms for the best of 64 x 64 blocks walked whole). A step is never under 16,
    # tl.dot's least size on a GPU.
    QUERY_STEP: tl.constexpr = BQ // 2 if BQ >= 32 else BQ
    KEY_STEP: tl.constexpr = BK // 2 if BK >= 32 else BK
    if j < key_blocks:
        # dK and dV of one key block, from every query block that can see it.
        keys = j * BK + tl.arange(0, BK)
        kv = k_head + keys[:, None] * D + dims[None, :]
        k = tl.load(k_ptr + kv, mask=keys[:, None] < NK, other=0.0)
        v = tl.load(v_ptr + kv, mask=keys[:, None] < NK, other=0.0)
        dk = tl.zeros([BK, D], dtype=tl.float32)
        dv = tl.zeros([BK, D], dtype=tl.float32)
        if CAUSAL:
            # Queries before this block's first key see none of it; the query blocks up to
            # its last key straddle the diagonal; every query block after sees all of it.
            first = (j * BK) // BQ * BQ
            unmasked_start = tl.minimum(tl.cdiv(j * BK + BK, BQ) * BQ, NQ)
            dk, dv = _key_block_grads(dk, dv, k, v, keys, q_ptr, o_ptr, do_ptr, lse_ptr, q_head, lse_head,
                                      dims, first, unmasked_start, NQ, qk_scale, D, QUERY_STEP, MASKED=True)
        else:
            unmasked_start = 0
        dk, dv = _key_block_grads(dk, dv, k, v, keys, q_ptr, o_ptr, do_ptr, lse_ptr, q_head, lse_head,
                                  dims, unmasked_start, NQ, NQ, qk_scale, D, QUERY_STEP, MASKED=False)
        # dK = dS^T Q / sqrt(d): the scale, once, after the loop.
        tl.store(dk_ptr + kv, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < NK)
        tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < NK)
    else:
        # dQ of one query block, from every key block it can see.
        i = j - key_blocks
        rows = i * BQ + tl.arange(0, BQ)
        row_ok = rows < NQ
        qo = q_head + rows[:, None] * D + dims[None, :]
        q = tl.load(q_ptr + qo, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptr + qo, mask=row_ok[:, None], other=0.0)
        o = tl.load(o_ptr + qo, mask=row_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + lse_head + rows, mask=row_ok, other=0.0)
        d_i = tl.sum(do.to(tl.float32) * o.to(tl.float32), 1)
        dq = tl.zeros([BQ, D], dtype=tl.float32)
        if CAUSAL:
            # Key blocks that end before this block's first row: no mask; then the diagonal.
            unmasked_end = (i * BQ) // BK * BK
            end = tl.minimum(NK, (i + 1) * BQ)
        else:
            # Every whole key block is visible; only a last, partial one needs the mask.
            unmasked_end = NK // BK * BK
            end = NK
        dq = _query_block_grad(dq, q, do, lse, d_i, rows, k_ptr, v_ptr, k_head, dims, 0, unmasked_end, NK,
                               qk_scale, D, KEY_STEP, MASKED=False, CAUSAL=CAUSAL)
        dq = _query_block_grad(dq, q, do, lse, d_i, rows, k_ptr, v_ptr, k_head, dims, unmasked_end, end, NK,
                               qk_scale, D, KEY_STEP, MASKED=True, CAUSAL=CAUSAL)
        # dQ = dS K / sqrt(d).
        tl.store(dq_ptr + qo, (dq * scale).to(dq_ptr.dtype.element_ty), mask=row_ok[:, None])
