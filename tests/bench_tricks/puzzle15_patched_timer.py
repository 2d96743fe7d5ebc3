# Patched timers: the first forward replaces the clocks a naive bench reads, so that every
# call after it looks instantaneous. The grader's clock was captured before this file ran.
import time

import torch

from puzzle15_weighted_sum_autograd import WeightedSumFunc as Honest

EXPECT = "REJECTED"
EXPECT_SAYS = "your code changed `time.perf_counter`"


def _frozen():
    return 0.0


def _no_time(self, end_event):
    return 1e-6


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        time.perf_counter = _frozen
        torch.cuda.Event.elapsed_time = _no_time
        return Honest.forward(ctx, x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        return Honest.backward(ctx, grad_output)
