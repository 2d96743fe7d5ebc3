"""Passes (D, 1) as the strides of x's rows, as if x were contiguous: right until x is a slice of
a wider tensor, whose rows lie apart in memory and keep their strides through reshape."""
import torch
import triton

# The reference kernels: the corpus is graded with solutions/ on the import path (Options.library).
from puzzle13_weighted_sum_forward import weighted_sum_fwd
from puzzle14_weighted_sum_backward import weighted_sum_bwd

EXPECT_KIND = "nonfinite"
EXPECT_CASE = "x_a_slice"
EXPECT_SAYS = "`x` read as if its rows were contiguous"


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        d = x.shape[-1]
        rows_x = x.reshape(-1, d)
        y = torch.empty(rows_x.shape[0], dtype=x.dtype, device=x.device)
        weighted_sum_fwd[(triton.cdiv(rows_x.shape[0], 16),)](
            rows_x, weight, y, d, 1, weight.stride(0), y.stride(0),
            rows_x.shape[0], d, ROWS_TILE_SIZE=16, D_TILE_SIZE=64)
        ctx.save_for_backward(x, weight)
        return y.view(x.shape[:-1])

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        d = x.shape[-1]
        rows_x = x.reshape(-1, d)
        g = grad_output.reshape(-1)
        tiles = triton.cdiv(rows_x.shape[0], 16)
        grad_x = torch.empty((rows_x.shape[0], d), dtype=x.dtype, device=x.device)
        partial = torch.empty((tiles, d), dtype=torch.float32, device=x.device)
        weighted_sum_bwd[(tiles,)](
            rows_x, weight, g, grad_x, partial, d, 1, weight.stride(0),
            g.stride(0), grad_x.stride(0), grad_x.stride(1), partial.stride(0), partial.stride(1),
            rows_x.shape[0], d, ROWS_TILE_SIZE=16, D_TILE_SIZE=64)
        return grad_x.view(x.shape), partial.sum(0).to(weight.dtype)
