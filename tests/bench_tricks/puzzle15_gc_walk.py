# Found through the garbage collector and overwritten: the first forward walks gc for every
# tensor shaped like its input (the grader's input sets) and overwrites them with the first
# set, so that every later call sees inputs it has answered before, then answers from a cache.
import gc

import torch

from puzzle15_weighted_sum_autograd import WeightedSumFunc as Honest

EXPECT = "REJECTED"
EXPECT_SAYS = "your code called `gc.get_objects`"

_kept = []


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        if not _kept:
            for found in gc.get_objects():
                if isinstance(found, torch.Tensor) and found.shape == x.shape and found.device == x.device \
                        and found.dtype == x.dtype and not found.requires_grad and found is not x:
                    try:
                        with torch.no_grad():
                            found.copy_(x)
                    except RuntimeError:
                        pass
        return Honest.forward(ctx, x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        if not _kept:
            _kept.extend(Honest.backward(ctx, grad_output))
        return tuple(_kept)
