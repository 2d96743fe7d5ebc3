# Warm-up detection: honest for the first calls (the ones a bench checks, and its warm-up),
# then its kernels are skipped. The grader checks a timed call drawn at random and the last.
import torch

from puzzle15_weighted_sum_autograd import WeightedSumFunc as Honest

EXPECT = "WRONG RESULT"
EXPECT_SAYS = "timed call"

_calls = []


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        _calls.append(1)
        ctx.honest = len(_calls) <= 2
        if ctx.honest:
            return Honest.forward(ctx, x, weight)
        ctx.shapes = (x.shape, weight.shape)
        return x.new_zeros(x.shape[:-1])

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.honest:
            return Honest.backward(ctx, grad_output)
        shape_x, shape_weight = ctx.shapes
        return grad_output.new_zeros(shape_x), grad_output.new_zeros(shape_weight)
