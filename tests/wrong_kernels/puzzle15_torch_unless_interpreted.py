"""Launches its kernels in the interpreter (on a laptop) and computes with PyTorch on a GPU: the wrapper
check refuses the environment read before anything runs."""
import os

import torch
import triton

# The reference kernels: the corpus is graded with solutions/ on the import path (Options.library).
from puzzle13_weighted_sum_forward import weighted_sum_fwd
from puzzle14_weighted_sum_backward import weighted_sum_bwd

EXPECT_KIND = "sniffing"
EXPECT_SAYS = "`.environ` reads the process's environment"


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        if not os.environ.get("TRITON_INTERPRET"):
            return x @ weight
        d = x.shape[-1]
        rows_x = x.reshape(-1, d)
        y = x.new_empty(rows_x.shape[0])
        weighted_sum_fwd[(triton.cdiv(rows_x.shape[0], 16),)](
            rows_x, weight, y, rows_x.stride(0), rows_x.stride(1), weight.stride(0), y.stride(0),
            rows_x.shape[0], d, ROWS_TILE_SIZE=16, D_TILE_SIZE=64)
        return y.view(x.shape[:-1])

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        d = x.shape[-1]
        rows_x = x.reshape(-1, d)
        g = grad_output.reshape(-1)
        tiles = triton.cdiv(rows_x.shape[0], 16)
        grad_x = x.new_empty(rows_x.shape)
        partial = x.new_empty((tiles, d))
        weighted_sum_bwd[(tiles,)](
            rows_x, weight, g, grad_x, partial, rows_x.stride(0), rows_x.stride(1), weight.stride(0),
            g.stride(0), grad_x.stride(0), grad_x.stride(1), partial.stride(0), partial.stride(1),
            rows_x.shape[0], d, ROWS_TILE_SIZE=16, D_TILE_SIZE=64)
        return grad_x.view(x.shape), partial.sum(0)
