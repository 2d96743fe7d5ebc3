# Puzzle 33 whose backward runs one program per key block, each adding its share of dQ to what the
# key blocks before it stored: a load, an add and a store of grad_q, no atomic. The interpreter runs
# the programs one after another, so every small case passes; on a GPU they run at once and lose
# each other's sums. A large case runs a sample of each launch's programs (keys_past_4096), and the
# second key block's program loads the rows of grad_q the first one stored: a race, named.
import torch
import triton
import triton.language as tl

from puzzle31_flash_attention_forward import attention_fwd_kernel

EXPECT_KIND = "race"
EXPECT_CASE = "keys_past_4096"
EXPECT_SAYS = "another program of the same launch"

FWD = {"BQ": 64, "BK": 64, "num_warps": 4}
BK, BQ = 32, 32


@triton.jit
def key_block_bwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, do_ptr, dq_ptr, dk_ptr, dv_ptr, NQ, NK,
                         D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr):
    j = tl.program_id(0)
    bh = tl.program_id(1)
    dims = tl.arange(0, D)
    keys = j * BK + tl.arange(0, BK)
    key_ok = keys < NK
    kv = bh * NK * D + keys[:, None] * D + dims[None, :]
    k = tl.load(k_ptr + kv, mask=key_ok[:, None], other=0.0)
    v = tl.load(v_ptr + kv, mask=key_ok[:, None], other=0.0)
    scale = 1.0 / tl.sqrt(D * 1.0)
    dk = tl.zeros([BK, D], dtype=tl.float32)
    dv = tl.zeros([BK, D], dtype=tl.float32)
    for start in range(0, NQ, BQ):
        rows = start + tl.arange(0, BQ)
        row_ok = rows < NQ
        qo = bh * NQ * D + rows[:, None] * D + dims[None, :]
        q = tl.load(q_ptr + qo, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptr + qo, mask=row_ok[:, None], other=0.0)
        o = tl.load(o_ptr + qo, mask=row_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + bh * NQ + rows, mask=row_ok, other=0.0)
        d_i = tl.sum(do.to(tl.float32) * o.to(tl.float32), 1)
        p = tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None])
        p = tl.where(key_ok[None, :] & row_ok[:, None], p, 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        ds = p * (tl.dot(do, tl.trans(v)) - d_i[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
        # The mistake: these rows' dQ so far, plus this key block's share, stored back (no atomic_add).
        dq = tl.load(dq_ptr + qo, mask=row_ok[:, None], other=0.0)
        tl.store(dq_ptr + qo, dq + tl.dot(ds.to(k.dtype), k) * scale, mask=row_ok[:, None])
    tl.store(dk_ptr + kv, (dk * scale).to(dk_ptr.dtype.element_ty), mask=key_ok[:, None])
    tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=key_ok[:, None])


class FlashAttentionFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        b, h, nq, d = q.shape
        nk = k.shape[2]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        lse = q.new_empty((b, h, nq), dtype=torch.float32)
        attention_fwd_kernel[(triton.cdiv(nq, FWD["BQ"]), b * h)](q, k, v, o, lse, nq, nk, D=d, CAUSAL=0, **FWD)
        ctx.save_for_backward(q, k, v, o, lse)
        return o

    @staticmethod
    def backward(ctx, grad_output):
        q, k, v, o, lse = ctx.saved_tensors
        b, h, nq, d = q.shape
        nk = k.shape[2]
        grad_q = torch.zeros(q.shape, dtype=torch.float32)
        grad_k, grad_v = torch.empty_like(k), torch.empty_like(v)
        key_block_bwd_kernel[(triton.cdiv(nk, BK), b * h)](q, k, v, o, lse, grad_output.contiguous(), grad_q, grad_k,
                                                          grad_v, nq, nk, D=d, BQ=BQ, BK=BK)
        return grad_q.to(q.dtype), grad_k, grad_v
