# Work deferred past the timer, without a thread: the call returns at once and a profile hook
# does the work the next time the grader calls any function, after its clock has stopped.
import sys

import torch

from puzzle15_weighted_sum_autograd import WeightedSumFunc as Honest

EXPECT = "REJECTED"
EXPECT_SAYS = "your code called `sys.setprofile`"

_pending = []


def _hook(frame, event, arg):
    while _pending:
        ctx, grad_output, grad_x, grad_weight = _pending.pop()
        right_x, right_weight = Honest.backward(ctx, grad_output)
        grad_x.copy_(right_x)
        grad_weight.copy_(right_weight)


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        return Honest.forward(ctx, x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x, grad_weight = torch.empty_like(x), torch.empty_like(weight)
        _pending.append((ctx, grad_output, grad_x, grad_weight))
        sys.setprofile(_hook)
        return grad_x, grad_weight
