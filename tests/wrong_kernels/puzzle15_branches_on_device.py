"""Launches its kernels on the CPU and computes with PyTorch on a GPU, by asking which device the
input is on. Wherever it is graded the wrapper sees a GPU (grader.sandbox.world), so it takes its
GPU path on the CPU too, and fails there as it would on a GPU."""
import torch
import triton

# The reference kernels: the corpus is graded with solutions/ on the import path (Options.library).
from puzzle13_weighted_sum_forward import weighted_sum_fwd
from puzzle14_weighted_sum_backward import weighted_sum_bwd

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "the forward launched no Triton kernel: compute it with your kernels from the previous puzzles."


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        d = x.shape[-1]
        rows_x = x.reshape(-1, d)
        y = x.new_empty(rows_x.shape[0])
        on_cpu = x.device.type == "cpu"
        if not on_cpu:
            return x @ weight
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
        grad_x = torch.empty_like(rows_x)
        partial = torch.empty((tiles, d), dtype=torch.float32, device=x.device)
        weighted_sum_bwd[(tiles,)](
            rows_x, weight, g, grad_x, partial, rows_x.stride(0), rows_x.stride(1), weight.stride(0),
            g.stride(0), grad_x.stride(0), grad_x.stride(1), partial.stride(0), partial.stride(1),
            rows_x.shape[0], d, ROWS_TILE_SIZE=16, D_TILE_SIZE=64)
        return grad_x.view_as(x), partial.sum(0)
