"""tl.exp instead of tl.exp2 with log2(e) folded into the scale: every exponential of the score
tile costs an extra multiply before the hardware's exp2; expect a few percent slower."""
import triton
import triton.language as tl


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
    scale = 1.0 / tl.sqrt(D * 1.0)
    m = tl.full([BQ], float("-inf"), dtype=tl.float32)
    l = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    # Causal: key blocks past this query block are fully masked; never visit them.
    end = tl.minimum(NK, (i + 1) * BQ) if CAUSAL else NK
    for start in range(0, end, BK):
        keys = start + tl.arange(0, BK)
        k = tl.load(k_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < NK, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        visible = (keys < NK)[None, :]
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, 1)
        v = tl.load(v_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < NK, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + bh * NQ * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < NQ)
    tl.store(lse_ptr + bh * NQ + rows, m + tl.log(l), mask=rows < NQ)
