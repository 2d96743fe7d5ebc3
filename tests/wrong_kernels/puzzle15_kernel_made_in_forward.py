"""Makes its kernel inside forward, with `triton.jit` called on a local function: the replay cannot find
a kernel that no module defines, and the message says where kernels must live."""
import torch
import triton

# The reference kernels: the corpus is graded with solutions/ on the import path (Options.library).
from puzzle13_weighted_sum_forward import weighted_sum_fwd
from puzzle14_weighted_sum_backward import weighted_sum_bwd

EXPECT_KIND = "exception"
EXPECT_SAYS = "which is not defined at the top level of the file or of a module it imports"


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        d = x.shape[-1]
        rows_x = x.reshape(-1, d)
        y = x.new_empty(rows_x.shape[0])
        local = triton.jit(weighted_sum_fwd.fn)
        local[(triton.cdiv(rows_x.shape[0], 16),)](
            rows_x, weight, y, rows_x.stride(0), rows_x.stride(1), weight.stride(0), y.stride(0),
            rows_x.shape[0], d, ROWS_TILE_SIZE=16, D_TILE_SIZE=64)
        ctx.save_for_backward(x, weight)
        return y.reshape(x.shape[:-1])

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
        return grad_x.reshape(x.shape), partial.sum(0)
