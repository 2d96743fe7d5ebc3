"""The model answer before issue 23, kept to calibrate --perf against its H100 time."""
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
    # exp2 is the GPU's native exponential: fold log2(e) into the score scale once.
    scale = 1.4426950408889634 / tl.sqrt(D * 1.0)
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
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, 1)
        v = tl.load(v_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < NK, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + bh * NQ * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < NQ)
    # m is in log2 units: lse = ln(2) * (m + log2(l)).
    tl.store(lse_ptr + bh * NQ + rows, 0.6931471805599453 * (m + tl.log2(l)), mask=rows < NQ)
