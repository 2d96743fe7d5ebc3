# Extra streams: the backward's kernels run on a stream of its own, which the events recorded
# on the current stream do not wait for (autograd believes the backward ran where its forward
# did); only a device-wide synchronise waits for them.
import torch

from puzzle15_weighted_sum_autograd import WeightedSumFunc as Honest

EXPECT = "REJECTED"
EXPECT_SAYS = "on another CUDA stream"
NEEDS = "cuda"

_side = []


def _stream():
    if not _side:
        _side.append(torch.cuda.Stream())
    return _side[0]


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        return Honest.forward(ctx, x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        with torch.cuda.stream(_stream()):
            return Honest.backward(ctx, grad_output)
