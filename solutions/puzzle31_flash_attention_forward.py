import triton
import triton.language as tl


@triton.jit
def _attend(acc, l, m, q, k_head, v_head, rows, dims, start, end, NK, qk_scale,
            D: tl.constexpr, BK: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """The online softmax over key blocks start, start + BK, ... below end. MASKED (a
    compile-time flag) says whether these blocks hold hidden keys: the causal diagonal or keys
    past NK. The blocks below the diagonal need no mask, and skipping its arithmetic is much of
    the speed: most blocks are of that kind."""
    for block in range(start, end, BK):
        keys = block + tl.arange(0, BK)
        kv = keys[:, None] * D + dims[None, :]
        if MASKED:
            k = tl.load(k_head + kv, mask=keys[:, None] < NK, other=0.0)
        else:
            k = tl.load(k_head + kv)
        s = tl.dot(q, tl.trans(k))
        if MASKED:
            visible = (keys < NK)[None, :]
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            s = tl.where(visible, s * qk_scale, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))
            s = s - m_new[:, None]
        else:
            # qk_scale > 0, so the maximum can be taken before scaling; then scale and
            # subtract in one fused multiply-add per score.
            m_new = tl.maximum(m, tl.max(s, 1) * qk_scale)
            s = s * qk_scale - m_new[:, None]
        # Scores are in log2 units (log2(e) is folded into qk_scale): exp2 is the GPU's native
        # exponential, where exp would cost a multiply more per score.
        p = tl.exp2(s)
        alpha = tl.exp2(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        if MASKED:
            v = tl.load(v_head + kv, mask=keys[:, None] < NK, other=0.0)
        else:
            v = tl.load(v_head + kv)
        # The third argument of tl.dot is added to the product in the tensor cores.
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m = m_new
    return acc, l, m


@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, NQ, NK, D: tl.constexpr,
                         BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    i = tl.program_id(0)
    bh = tl.program_id(1)
    rows = i * BQ + tl.arange(0, BQ)
    dims = tl.arange(0, D)
    q_head = q_ptr + bh * NQ * D
    k_head = k_ptr + bh * NK * D
    v_head = v_ptr + bh * NK * D
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=rows[:, None] < NQ, other=0.0)
    # 1 / sqrt(d) and log2(e) in one factor.
    qk_scale = 1.4426950408889634 / tl.sqrt(D * 1.0)
    m = tl.full([BQ], float("-inf"), dtype=tl.float32)
    l = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    if CAUSAL:
        # Key blocks that end before this query block's first row are visible to every row;
        # the blocks from there to the diagonal need the mask; those past it, no work at all.
        unmasked_end = (i * BQ) // BK * BK
        end = tl.minimum(NK, (i + 1) * BQ)
    else:
        # Every whole key block is visible; only a last, partial one needs the mask.
        unmasked_end = NK // BK * BK
        end = NK
    acc, l, m = _attend(acc, l, m, q, k_head, v_head, rows, dims, 0, unmasked_end, NK, qk_scale,
                        D, BK, MASKED=False, CAUSAL=CAUSAL)
    acc, l, m = _attend(acc, l, m, q, k_head, v_head, rows, dims, unmasked_end, end, NK, qk_scale,
                        D, BK, MASKED=True, CAUSAL=CAUSAL)
    o = acc / l[:, None]
    tl.store(o_ptr + bh * NQ * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < NQ)
    # m is in log2 units: lse = ln(2) * (m + log2(l)).
    tl.store(lse_ptr + bh * NQ + rows, 0.6931471805599453 * (m + tl.log2(l)), mask=rows < NQ)
