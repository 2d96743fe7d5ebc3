# Puzzle 33 without making q, k and v contiguous: the kernels index rows as if they were, so
# inputs handed over as strided views (as a model's are) are read in the wrong order.
import torch
import triton

from puzzle31_flash_attention_forward import attention_fwd_kernel
from puzzle32_flash_attention_backward import attention_bwd_kernel

EXPECT_KIND = "mismatch"
EXPECT_CASE = "inputs_not_contiguous"

# Tiles measured fastest on an H200 at the bench's sizes (head dim 128; benchmarks/tune_issue23.py);
# the interpreter runs them too. The backward's blocks of 128 are walked in steps of 64 (see
# puzzle 32's solution): 128 x 64 score tiles beside two 128 x 128 accumulators.
FWD = {"BQ": 128, "BK": 64, "num_warps": 8, "num_stages": 3}
BWD = {"BQ": 128, "BK": 128, "num_warps": 8, "num_stages": 3}


class FlashAttentionFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        b, h, nq, d = q.shape
        nk = k.shape[2]
        o = torch.empty_like(q)
        lse = q.new_empty((b, h, nq), dtype=torch.float32)
        grid = (triton.cdiv(nq, FWD["BQ"]), b * h)
        attention_fwd_kernel[grid](q, k, v, o, lse, nq, nk, D=d, CAUSAL=0, **FWD)
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
