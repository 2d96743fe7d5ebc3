# Work deferred past the timer: backward returns buffers at once and a thread fills them in
# afterwards, while the bench has already stopped its clock.
import threading
import time

import torch

from puzzle15_weighted_sum_autograd import WeightedSumFunc as Honest

EXPECT = "REJECTED"
EXPECT_SAYS = "thread running after the first call returned"


def _later(x, weight, grad_output, grad_x, grad_weight):
    time.sleep(0.2)
    grad_x.copy_(grad_output[..., None] * weight)
    grad_weight.copy_((x * grad_output[..., None]).reshape(-1, x.shape[-1]).sum(0))


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        return Honest.forward(ctx, x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x, grad_weight = torch.empty_like(x), torch.empty_like(weight)
        threading.Thread(target=_later, args=(x.detach(), weight.detach(), grad_output, grad_x, grad_weight)).start()
        return grad_x, grad_weight
