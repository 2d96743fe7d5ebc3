"""Turns PyTorch's dispatch modes off to compute with PyTorch unseen: the wrapper check refuses the
switch before anything runs (and a recording would see the matmul's result come from nowhere)."""
import torch
import triton
from torch.utils._python_dispatch import _disable_current_modes

# The reference kernels: the corpus is graded with solutions/ on the import path (Options.library).
from puzzle13_weighted_sum_forward import weighted_sum_fwd
from puzzle14_weighted_sum_backward import weighted_sum_bwd

EXPECT_KIND = "sniffing"
EXPECT_SAYS = "`_disable_current_modes` (from `torch.utils._python_dispatch._disable_current_modes`)"


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        d = x.shape[-1]
        rows_x = x.reshape(-1, d)
        y = x.new_empty(rows_x.shape[0])
        weighted_sum_fwd[(triton.cdiv(rows_x.shape[0], 16),)](
            rows_x, weight, y, rows_x.stride(0), rows_x.stride(1), weight.stride(0), y.stride(0),
            rows_x.shape[0], d, ROWS_TILE_SIZE=16, D_TILE_SIZE=64)
        ctx.save_for_backward(x, weight)
        with _disable_current_modes():
            return x @ weight

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
        with torch._C._DisableTorchDispatch():
            return grad_output[..., None] * weight, g @ rows_x
