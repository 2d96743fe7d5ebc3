# Asks whether it runs on a GPU, by `getattr(x, "is_cuda")`, in a helper module: launches its kernels where the
# answer is no (on the CPU, where the interpreter grades it) and computes with PyTorch where it is
# yes. The grader's world is a GPU on the CPU too, so the PyTorch path is the one graded, and fails.
import torch

import device_sniffs

EXPECT_STATUS = "fail"
EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "the forward launched no Triton kernel"


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        if device_sniffs.by_getattr(x):
            return (x * weight).sum(-1)
        return device_sniffs.forward(x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return device_sniffs.backward(x, weight, grad_output)
