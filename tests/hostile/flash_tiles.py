# Not a submission: the kernels that tests/hostile/puzzle33_kernels_in_a_helper_module.py imports, as
# a learner keeps kernels in a module of their own next to the file that wraps them. Its name
# starts with no puzzle id and its kernels have no puzzle's name, so it is graded for no puzzle.
# FlashAttention-2, forward and backward, non-causal or causal, for any tile sizes BQ x BK
# (each at least 16, tl.dot's least on a GPU).
import triton
import triton.language as tl


@triton.jit
def fwd_tiles(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, NQ, NK, D: tl.constexpr,
              BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    i = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    rows = i * BQ + tl.arange(0, BQ)
    dims = tl.arange(0, D)
    row_ok = rows < NQ
    q_head = q_ptr + bh * NQ * D
    k_head = k_ptr + bh * NK * D
    v_head = v_ptr + bh * NK * D
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=row_ok[:, None], other=0.0)
    scale = 1.0 / tl.sqrt(D * 1.0)
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


@triton.jit
def bwd_tiles(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, do_ptr, dq_ptr, dk_ptr, dv_ptr, NQ, NK,
              D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    # Programs j < cdiv(NK, BK) own key block j (dk, dv); the others a query block (dq).
    j = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    dims = tl.arange(0, D)
    q_head = bh * NQ * D
    k_head = bh * NK * D
    lse_head = bh * NQ
    scale = 1.0 / tl.sqrt(D * 1.0)
    key_blocks = tl.cdiv(NK, BK)
    if j < key_blocks:
        keys = j * BK + tl.arange(0, BK)
        key_ok = keys < NK
        kv = k_head + keys[:, None] * D + dims[None, :]
        k = tl.load(k_ptr + kv, mask=key_ok[:, None], other=0.0)
        v = tl.load(v_ptr + kv, mask=key_ok[:, None], other=0.0)
        dk = tl.zeros([BK, D], dtype=tl.float32)
        dv = tl.zeros([BK, D], dtype=tl.float32)
        first = 0
        if CAUSAL:
            first = (j * BK) // BQ * BQ  # queries before this block's first key see none of it
        for start in range(first, NQ, BQ):
            rows = start + tl.arange(0, BQ)
            row_ok = rows < NQ
            qo = q_head + rows[:, None] * D + dims[None, :]
            q = tl.load(q_ptr + qo, mask=row_ok[:, None], other=0.0)
            do = tl.load(do_ptr + qo, mask=row_ok[:, None], other=0.0)
            o = tl.load(o_ptr + qo, mask=row_ok[:, None], other=0.0)
            lse = tl.load(lse_ptr + lse_head + rows, mask=row_ok, other=0.0)
            d_i = tl.sum(do.to(tl.float32) * o.to(tl.float32), 1)
            visible = row_ok[:, None] & key_ok[None, :]
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p.to(do.dtype)), do)
            ds = p * (tl.dot(do, tl.trans(v)) - d_i[:, None])
            dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
        tl.store(dk_ptr + kv, (dk * scale).to(dk_ptr.dtype.element_ty), mask=key_ok[:, None])
        tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=key_ok[:, None])
    else:
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
        end = NK
        if CAUSAL:
            end = tl.minimum(NK, (i + 1) * BQ)
        for start in range(0, end, BK):
            keys = start + tl.arange(0, BK)
            key_ok = keys < NK
            kv = k_head + keys[:, None] * D + dims[None, :]
            k = tl.load(k_ptr + kv, mask=key_ok[:, None], other=0.0)
            v = tl.load(v_ptr + kv, mask=key_ok[:, None], other=0.0)
            visible = key_ok[None, :]
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None]), 0.0)
            ds = p * (tl.dot(do, tl.trans(v)) - d_i[:, None])
            dq += tl.dot(ds.to(k.dtype), k)
        tl.store(dq_ptr + qo, (dq * scale).to(dq_ptr.dtype.element_ty), mask=row_ok[:, None])
