# Puzzle 33 whose forward walks at most 4096 keys, the longest context of the model it was written
# for: every query ignores the keys past 4096. Right at every size up to there; only a case with
# more keys (the sampled `keys_past_4096`, 3 batches of 4 heads) sees the output wrong.
import torch
import triton
import triton.language as tl

from puzzle31_flash_attention_forward import _attend
from puzzle32_flash_attention_backward import attention_bwd_kernel

EXPECT_KIND = "mismatch"
EXPECT_CASE = "keys_past_4096"
EXPECT_SAYS = "keys_past_4096"

CONTEXT = 4096
FWD = {"BQ": 64, "BK": 64, "num_warps": 4}
BWD = {"BQ": 64, "BK": 64, "num_warps": 4}


@triton.jit
def capped_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, NQ, NK, D: tl.constexpr, BQ: tl.constexpr,
                      BK: tl.constexpr, CONTEXT: tl.constexpr):
    i = tl.program_id(0)
    bh = tl.program_id(1)
    rows = i * BQ + tl.arange(0, BQ)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + bh * NQ * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < NQ, other=0.0)
    qk_scale = 1.4426950408889634 / tl.sqrt(D * 1.0)
    m = tl.full([BQ], float("-inf"), dtype=tl.float32)
    l = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    keys = tl.minimum(NK, CONTEXT)  # the mistake: keys past the context are never seen
    acc, l, m = _attend(acc, l, m, q, k_ptr + bh * NK * D, v_ptr + bh * NK * D, rows, dims, 0, keys, keys,
                        qk_scale, D, BK, MASKED=True, CAUSAL=False)
    tl.store(o_ptr + bh * NQ * D + rows[:, None] * D + dims[None, :], (acc / l[:, None]).to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < NQ)
    tl.store(lse_ptr + bh * NQ + rows, 0.6931471805599453 * (m + tl.log2(l)), mask=rows < NQ)


class FlashAttentionFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        b, h, nq, d = q.shape
        nk = k.shape[2]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        lse = q.new_empty((b, h, nq), dtype=torch.float32)
        capped_fwd_kernel[(triton.cdiv(nq, FWD["BQ"]), b * h)](q, k, v, o, lse, nq, nk, D=d, CONTEXT=CONTEXT, **FWD)
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
