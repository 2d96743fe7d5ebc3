"""Correct weighted-sum kernels (puzzles 13 and 14) for the puzzle 15 wrappers of this corpus.

The grader hides the course's solutions/ from the files it grades here, so the wrappers import
these instead. Not named ``puzzle*``: the corpus test does not grade this file by itself.
"""
import triton
import triton.language as tl


@triton.jit
def weighted_sum_fwd(x_ptr, weight_ptr, output_ptr, x_stride_row, x_stride_dim, weight_stride_dim,
                     output_stride_row, ROWS, D, ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr):
    rows = tl.program_id(0) * ROWS_TILE_SIZE + tl.arange(0, ROWS_TILE_SIZE)
    total = tl.zeros((ROWS_TILE_SIZE,), dtype=tl.float32)
    for start in range(0, D, D_TILE_SIZE):
        dims = start + tl.arange(0, D_TILE_SIZE)
        mask = (rows[:, None] < ROWS) & (dims[None, :] < D)
        x = tl.load(x_ptr + rows[:, None] * x_stride_row + dims[None, :] * x_stride_dim, mask=mask, other=0.0)
        w = tl.load(weight_ptr + dims * weight_stride_dim, mask=dims < D, other=0.0)
        total += tl.sum(x * w[None, :], axis=1)
    tl.store(output_ptr + rows * output_stride_row, total, mask=rows < ROWS)


@triton.jit
def weighted_sum_bwd(x_ptr, weight_ptr, grad_output_ptr, grad_x_ptr, partial_ptr, x_stride_row, x_stride_dim,
                     weight_stride_dim, grad_output_stride_row, grad_x_stride_row, grad_x_stride_dim,
                     partial_stride_row, partial_stride_dim, ROWS, D,
                     ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr):
    tile = tl.program_id(0)
    rows = tile * ROWS_TILE_SIZE + tl.arange(0, ROWS_TILE_SIZE)
    g = tl.load(grad_output_ptr + rows * grad_output_stride_row, mask=rows < ROWS, other=0.0)
    for start in range(0, D, D_TILE_SIZE):
        dims = start + tl.arange(0, D_TILE_SIZE)
        mask = (rows[:, None] < ROWS) & (dims[None, :] < D)
        x = tl.load(x_ptr + rows[:, None] * x_stride_row + dims[None, :] * x_stride_dim, mask=mask, other=0.0)
        w = tl.load(weight_ptr + dims * weight_stride_dim, mask=dims < D, other=0.0)
        tl.store(grad_x_ptr + rows[:, None] * grad_x_stride_row + dims[None, :] * grad_x_stride_dim,
                 g[:, None] * w[None, :], mask=mask)
        tl.store(partial_ptr + tile * partial_stride_row + dims * partial_stride_dim,
                 tl.sum(g[:, None] * x, axis=0), mask=dims < D)
