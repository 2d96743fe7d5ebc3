# A wrapper that lets PyTorch do the attention: scaled_dot_product_attention in the forward,
# autograd through it in the backward. Right values, no kernel of the learner's.
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "computes attention with PyTorch"


class FlashAttentionFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        ctx.save_for_backward(q, k, v)
        return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float()).half()

    @staticmethod
    def backward(ctx, grad_output):
        q, k, v = (t.detach().float().requires_grad_() for t in ctx.saved_tensors)
        with torch.enable_grad():
            o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        grads = torch.autograd.grad(o, (q, k, v), grad_output.float())
        return tuple(g.half() for g in grads)
