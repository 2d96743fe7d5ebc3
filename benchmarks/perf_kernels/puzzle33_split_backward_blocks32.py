"""puzzle33_split_backward with 32 x 32 tiles and 4 warps in every kernel instead of 128 x 64 and
64 x 64 with 8: smaller tensor-core products, and k, v (forward) and q, do (backward) re-read by
2-4x more programs; expect a clearly slower step than the split version."""
import torch
import triton
import triton.language as tl

FWD = {"BQ": 32, "BK": 32, "num_warps": 4, "num_stages": 2}
BWD = {"BQ": 32, "BK": 32, "num_warps": 4, "num_stages": 2}


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, NQ, NK, D: tl.constexpr, BQ: tl.constexpr,
                  BK: tl.constexpr):
    i = tl.program_id(0)
    bh = tl.program_id(1)
    rows = i * BQ + tl.arange(0, BQ)
    dims = tl.arange(0, D)
    row_ok = rows < NQ
    q_tile = bh * NQ * D + rows[:, None] * D + dims[None, :]
    q = tl.load(q_ptr + q_tile, mask=row_ok[:, None], other=0.0)
    qk_scale = 1.4426950408889634 / tl.sqrt(D * 1.0)  # log2(e) / sqrt(d): scores in log2 units, for exp2
    m = tl.full([BQ], float("-inf"), dtype=tl.float32)
    l = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    for start in range(0, NK, BK):
        keys = start + tl.arange(0, BK)
        key_ok = keys < NK
        kv_tile = bh * NK * D + keys[:, None] * D + dims[None, :]
        k = tl.load(k_ptr + kv_tile, mask=key_ok[:, None], other=0.0)
        s = tl.where(key_ok[None, :], tl.dot(q, tl.trans(k)) * qk_scale, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + kv_tile, mask=key_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    tl.store(o_ptr + q_tile, (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
    tl.store(lse_ptr + bh * NQ + rows, 0.6931471805599453 * (m + tl.log2(l)), mask=row_ok)


@triton.jit
def attention_bwd_delta(o_ptr, do_ptr, delta_ptr, NQ, D: tl.constexpr, BQ: tl.constexpr):
    rows = tl.program_id(0) * BQ + tl.arange(0, BQ)
    bh = tl.program_id(1)
    dims = tl.arange(0, D)
    row_ok = rows < NQ
    tile = bh * NQ * D + rows[:, None] * D + dims[None, :]
    o = tl.load(o_ptr + tile, mask=row_ok[:, None], other=0.0).to(tl.float32)
    do = tl.load(do_ptr + tile, mask=row_ok[:, None], other=0.0).to(tl.float32)
    tl.store(delta_ptr + bh * NQ + rows, tl.sum(o * do, 1), mask=row_ok)


@triton.jit
def attention_bwd_dkdv(q_ptr, k_ptr, v_ptr, lse_ptr, delta_ptr, do_ptr, dk_ptr, dv_ptr, NQ, NK,
                       D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr):
    j = tl.program_id(0)
    bh = tl.program_id(1)
    dims = tl.arange(0, D)
    keys = j * BK + tl.arange(0, BK)
    key_ok = keys < NK
    kv_tile = bh * NK * D + keys[:, None] * D + dims[None, :]
    k = tl.load(k_ptr + kv_tile, mask=key_ok[:, None], other=0.0)
    v = tl.load(v_ptr + kv_tile, mask=key_ok[:, None], other=0.0)
    scale = 1.0 / tl.sqrt(D * 1.0)
    dk = tl.zeros([BK, D], dtype=tl.float32)
    dv = tl.zeros([BK, D], dtype=tl.float32)
    for start in range(0, NQ, BQ):
        rows = start + tl.arange(0, BQ)
        row_ok = rows < NQ
        q_tile = bh * NQ * D + rows[:, None] * D + dims[None, :]
        q = tl.load(q_ptr + q_tile, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptr + q_tile, mask=row_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + bh * NQ + rows, mask=row_ok, other=0.0)
        delta = tl.load(delta_ptr + bh * NQ + rows, mask=row_ok, other=0.0)
        visible = row_ok[:, None] & key_ok[None, :]
        p = tl.where(visible, tl.exp2((tl.dot(q, tl.trans(k)) * scale - lse[:, None]) * 1.4426950408889634), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
    tl.store(dk_ptr + kv_tile, (dk * scale).to(dk_ptr.dtype.element_ty), mask=key_ok[:, None])
    tl.store(dv_ptr + kv_tile, dv.to(dv_ptr.dtype.element_ty), mask=key_ok[:, None])


@triton.jit
def attention_bwd_dq(q_ptr, k_ptr, v_ptr, lse_ptr, delta_ptr, do_ptr, dq_ptr, NQ, NK,
                     D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr):
    i = tl.program_id(0)
    bh = tl.program_id(1)
    dims = tl.arange(0, D)
    rows = i * BQ + tl.arange(0, BQ)
    row_ok = rows < NQ
    q_tile = bh * NQ * D + rows[:, None] * D + dims[None, :]
    q = tl.load(q_ptr + q_tile, mask=row_ok[:, None], other=0.0)
    do = tl.load(do_ptr + q_tile, mask=row_ok[:, None], other=0.0)
    lse = tl.load(lse_ptr + bh * NQ + rows, mask=row_ok, other=0.0)
    delta = tl.load(delta_ptr + bh * NQ + rows, mask=row_ok, other=0.0)
    scale = 1.0 / tl.sqrt(D * 1.0)
    dq = tl.zeros([BQ, D], dtype=tl.float32)
    for start in range(0, NK, BK):
        keys = start + tl.arange(0, BK)
        key_ok = keys < NK
        kv_tile = bh * NK * D + keys[:, None] * D + dims[None, :]
        k = tl.load(k_ptr + kv_tile, mask=key_ok[:, None], other=0.0)
        v = tl.load(v_ptr + kv_tile, mask=key_ok[:, None], other=0.0)
        visible = row_ok[:, None] & key_ok[None, :]
        p = tl.where(visible, tl.exp2((tl.dot(q, tl.trans(k)) * scale - lse[:, None]) * 1.4426950408889634), 0.0)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)
    tl.store(dq_ptr + q_tile, (dq * scale).to(dq_ptr.dtype.element_ty), mask=row_ok[:, None])


class FlashAttentionFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        b, h, nq, d = q.shape
        nk = k.shape[2]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        lse = q.new_empty((b, h, nq), dtype=torch.float32)
        attention_fwd[(triton.cdiv(nq, FWD["BQ"]), b * h)](q, k, v, o, lse, nq, nk, D=d, **FWD)
        ctx.save_for_backward(q, k, v, o, lse)
        return o

    @staticmethod
    def backward(ctx, grad_output):
        q, k, v, o, lse = ctx.saved_tensors
        b, h, nq, d = q.shape
        nk = k.shape[2]
        do = grad_output.contiguous()
        delta = torch.empty_like(lse)
        attention_bwd_delta[(triton.cdiv(nq, BWD["BQ"]), b * h)](o, do, delta, nq, D=d, BQ=BWD["BQ"])
        grad_q, grad_k, grad_v = (torch.empty_like(t) for t in (q, k, v))
        attention_bwd_dkdv[(triton.cdiv(nk, BWD["BK"]), b * h)](q, k, v, lse, delta, do, grad_k, grad_v, nq, nk,
                                                                D=d, **BWD)
        attention_bwd_dq[(triton.cdiv(nq, BWD["BQ"]), b * h)](q, k, v, lse, delta, do, grad_q, nq, nk, D=d, **BWD)
        return grad_q, grad_k, grad_v
