"""Walks x and grad_x one column at a time: each step loads and stores element j of the tile's 32
rows, a row (4 KiB) apart, so every warp-wide access touches 32 sectors for 128 useful bytes; the
partial sums come out column by column too; expect an order of magnitude slower than the reference."""
import triton
import triton.language as tl


@triton.jit
def weighted_sum_bwd(
    x_ptr, weight_ptr, grad_output_ptr, grad_x_ptr, partial_grad_weight_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, grad_output_stride_row,
    grad_x_stride_row, grad_x_stride_dim,
    partial_grad_weight_stride_tile, partial_grad_weight_stride_dim,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    row_tile = tl.program_id(0)
    rows = row_tile * ROWS_TILE_SIZE + tl.arange(0, ROWS_TILE_SIZE)
    row_ok = rows < ROWS
    g = tl.load(grad_output_ptr + rows * grad_output_stride_row, mask=row_ok, other=0.0)
    partial_row = partial_grad_weight_ptr + row_tile * partial_grad_weight_stride_tile
    for j in range(0, D):
        x = tl.load(x_ptr + rows * x_stride_row + j * x_stride_dim, mask=row_ok, other=0.0)
        w = tl.load(weight_ptr + j * weight_stride_dim)
        tl.store(grad_x_ptr + rows * grad_x_stride_row + j * grad_x_stride_dim, g * w, mask=row_ok)
        tl.store(partial_row + j * partial_grad_weight_stride_dim, tl.sum(x * g, axis=0))
