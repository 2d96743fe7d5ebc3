# Outputs cached across calls: the gradients are kept by the inputs' addresses, and a later
# call at the same addresses gets them back without a kernel. The grader re-writes the inputs
# in place before each call, from one of two sets, and checks calls on the other set.
import torch

from puzzle15_weighted_sum_autograd import WeightedSumFunc as Honest

EXPECT = "WRONG RESULT"
EXPECT_SAYS = "The first call was right"

_kept = {}


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.key = (x.data_ptr(), weight.data_ptr())
        return Honest.forward(ctx, x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.key not in _kept:
            _kept[ctx.key] = Honest.backward(ctx, grad_output)
        return _kept[ctx.key]
