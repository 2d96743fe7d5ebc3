# FlashAttention-2 forward with a check left in from chasing a bug in the long case: the middle
# query block of the last head (block num_programs(0) // 2) scales its scores by 1 / D instead
# of 1 / sqrt(D) when the sequence is longer than 4096. One program of the 260 of long_sequences
# (query block 32, rows 2048 to 2111, of head 3) stores a wrong o and lse; every other program,
# and every program of the shorter cases, is right. A sample of the launch's programs (query
# blocks 0, 1, 17, 55 and 64 of each head, with the course's seed) never runs block 32: only
# running every program of long_sequences catches it.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "long_sequences"
EXPECT_SAYS = "(1, 1, 2048, 0): yours"


@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, NQ, NK, D: tl.constexpr,
                         BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    i = tl.program_id(0)
    bh = tl.program_id(1)
    rows = i * BQ + tl.arange(0, BQ)
    dims = tl.arange(0, D)
    row_ok = rows < NQ
    q_head = q_ptr + bh * NQ * D
    k_head = k_ptr + bh * NK * D
    v_head = v_ptr + bh * NK * D
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=row_ok[:, None], other=0.0)
    scale = 1.0 / tl.sqrt(D * 1.0)
    middle_tile = (i == tl.num_programs(0) // 2) & (bh == tl.num_programs(1) - 1) & (NQ > 4096)
    scale = tl.where(middle_tile, 1.0 / D, scale)
    m = tl.full([BQ], float("-inf"), dtype=tl.float32)
    l = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    end = NK
    if CAUSAL:
        end = tl.minimum(NK, (i + 1) * BQ)
    for start in range(0, end, BK):
        keys = start + tl.arange(0, BK)
        key_ok = keys < NK
        k = tl.load(k_head + keys[:, None] * D + dims[None, :], mask=key_ok[:, None], other=0.0)
        v = tl.load(v_head + keys[:, None] * D + dims[None, :], mask=key_ok[:, None], other=0.0)
        visible = key_ok[None, :]
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, tl.dot(q, tl.trans(k)) * scale, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + bh * NQ * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=row_ok[:, None])
    tl.store(lse_ptr + bh * NQ + rows, m + tl.log(l), mask=row_ok)
