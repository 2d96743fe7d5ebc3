# Puzzle 33 whose forward stores each row's logsumexp at (head * B + batch) while it reads q and
# writes o at (batch * H + head), the backward reading lse at the latter. The two orders agree
# whenever B or H is 1, as in every case but one; with 2 batches of 3 heads the backward reads
# another head's logsumexp, and every gradient is wrong while the output is right.
import torch
import triton
import triton.language as tl

from puzzle31_flash_attention_forward import _attend
from puzzle32_flash_attention_backward import attention_bwd_kernel

EXPECT_KIND = "mismatch"
EXPECT_CASE = "batches_and_heads"
EXPECT_SAYS = "batches_and_heads"

BWD = {"BQ": 64, "BK": 64, "num_warps": 4}


@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, NQ, NK, H, D: tl.constexpr,
                         BQ: tl.constexpr, BK: tl.constexpr):
    i = tl.program_id(0)
    bh = tl.program_id(1)
    rows = i * BQ + tl.arange(0, BQ)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + bh * NQ * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < NQ, other=0.0)
    qk_scale = 1.4426950408889634 / tl.sqrt(D * 1.0)
    m = tl.full([BQ], float("-inf"), dtype=tl.float32)
    l = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    acc, l, m = _attend(acc, l, m, q, k_ptr + bh * NK * D, v_ptr + bh * NK * D, rows, dims, 0, NK, NK,
                        qk_scale, D, BK, MASKED=True, CAUSAL=False)
    o = acc / l[:, None]
    tl.store(o_ptr + bh * NQ * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < NQ)
    B = tl.num_programs(1) // H
    head_major = (bh % H) * B + bh // H
    tl.store(lse_ptr + head_major * NQ + rows, 0.6931471805599453 * (m + tl.log2(l)), mask=rows < NQ)


class FlashAttentionFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        b, h, nq, d = q.shape
        nk = k.shape[2]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        lse = q.new_empty((b, h, nq), dtype=torch.float32)
        attention_fwd_kernel[(triton.cdiv(nq, 64), b * h)](q, k, v, o, lse, nq, nk, h, D=d, BQ=64, BK=32,
                                                             num_warps=4)
        ctx.save_for_backward(q, k, v, o, lse)
        return o

    @staticmethod
    def backward(ctx, grad_output):
        q, k, v, o, lse = ctx.saved_tensors
        b, h, nq, d = q.shape
        nk = k.shape[2]
        grad_q, grad_k, grad_v = (torch.empty_like(t) for t in (q, k, v))
        grid = (triton.cdiv(nk, BWD["BK"]) + triton.cdiv(nq, BWD["BQ"]), b * h)
        attention_bwd_kernel[grid](q, k, v, o, lse, grad_output.contiguous(), grad_q, grad_k, grad_v, nq, nk,
                                   D=d, CAUSAL=0, **BWD)
        return grad_q, grad_k, grad_v
