# NaN as a wildcard: a checker that counts `abs(yours - expected) > tol` passes every NaN, since
# NaN compares false. Half of grad_x is left NaN; the grader's NaN never compares equal.
import torch

from puzzle15_weighted_sum_autograd import WeightedSumFunc as Honest

EXPECT = "WRONG RESULT"
EXPECT_SAYS = "NaN/Inf value(s) where the spec is finite"


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        return Honest.forward(ctx, x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, grad_weight = Honest.backward(ctx, grad_output)
        grad_x = grad_x.clone()
        grad_x.view(-1)[::2] = float("nan")
        return grad_x, grad_weight
