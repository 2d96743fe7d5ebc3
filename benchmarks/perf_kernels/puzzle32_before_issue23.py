"""The model answer before issue 23, kept to calibrate --perf against its H100 time."""
import triton
import triton.language as tl


@triton.jit
def attention_bwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, do_ptr, dq_ptr, dk_ptr, dv_ptr, NQ, NK,
                         D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    j = tl.program_id(0)
    bh = tl.program_id(1)
    dims = tl.arange(0, D)
    q_head, o_head, do_head = bh * NQ * D, bh * NQ * D, bh * NQ * D
    k_head = bh * NK * D
    scale = 1.0 / tl.sqrt(D * 1.0)
    key_blocks = tl.cdiv(NK, BK)
    if j < key_blocks:
        # dK and dV of one key block, from every query block that can see it.
        keys = j * BK + tl.arange(0, BK)
        key_ok = keys < NK
        kv = k_head + keys[:, None] * D + dims[None, :]
        k = tl.load(k_ptr + kv, mask=key_ok[:, None], other=0.0)
        v = tl.load(v_ptr + kv, mask=key_ok[:, None], other=0.0)
        dk = tl.zeros([BK, D], dtype=tl.float32)
        dv = tl.zeros([BK, D], dtype=tl.float32)
        # Causal: queries before this block's first key see none of it.
        first = (j * BK // BQ) * BQ if CAUSAL else 0
        for start in range(first, NQ, BQ):
            rows = start + tl.arange(0, BQ)
            row_ok = rows < NQ
            qo = q_head + rows[:, None] * D + dims[None, :]
            q = tl.load(q_ptr + qo, mask=row_ok[:, None], other=0.0)
            do = tl.load(do_ptr + qo, mask=row_ok[:, None], other=0.0)
            o = tl.load(o_ptr + qo, mask=row_ok[:, None], other=0.0)
            lse = tl.load(lse_ptr + bh * NQ + rows, mask=row_ok, other=0.0)
            d_i = tl.sum(do.to(tl.float32) * o.to(tl.float32), 1)
            visible = row_ok[:, None] & key_ok[None, :]
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p.to(tl.float16)), do)
            ds = p * (tl.dot(do, tl.trans(v)) - d_i[:, None])
            dk += tl.dot(tl.trans(ds.to(tl.float16)), q)
        tl.store(dk_ptr + kv, (dk * scale).to(tl.float16), mask=key_ok[:, None])
        tl.store(dv_ptr + kv, dv.to(tl.float16), mask=key_ok[:, None])
    else:
        # dQ of one query block, from every key block it can see.
        i = j - key_blocks
        rows = i * BQ + tl.arange(0, BQ)
        row_ok = rows < NQ
        qo = q_head + rows[:, None] * D + dims[None, :]
        q = tl.load(q_ptr + qo, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptr + qo, mask=row_ok[:, None], other=0.0)
        o = tl.load(o_ptr + qo, mask=row_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + bh * NQ + rows, mask=row_ok, other=0.0)
        d_i = tl.sum(do.to(tl.float32) * o.to(tl.float32), 1)
        dq = tl.zeros([BQ, D], dtype=tl.float32)
        end = tl.minimum(NK, (i + 1) * BQ) if CAUSAL else NK
        for start in range(0, end, BK):
            keys = start + tl.arange(0, BK)
            key_ok = keys < NK
            kv = k_head + keys[:, None] * D + dims[None, :]
            k = tl.load(k_ptr + kv, mask=key_ok[:, None], other=0.0)
            v = tl.load(v_ptr + kv, mask=key_ok[:, None], other=0.0)
            visible = row_ok[:, None] & key_ok[None, :]
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None]), 0.0)
            ds = p * (tl.dot(do, tl.trans(v)) - d_i[:, None])
            dq += tl.dot(ds.to(tl.float16), k)
        tl.store(dq_ptr + qo, (dq * scale).to(tl.float16), mask=row_ok[:, None])
