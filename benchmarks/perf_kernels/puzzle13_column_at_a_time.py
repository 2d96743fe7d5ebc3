"""Walks x one column at a time: each step loads element j of the tile's rows, a row (4 KiB) apart,
so the fastest-varying lane index walks the slow axis and a load brings 4 useful bytes per 32-byte
sector, with 4 lanes busy at the bench's 4-row tiles; expect an order of magnitude slower."""
import triton
import triton.language as tl


@triton.jit
def weighted_sum_fwd(
    x_ptr, weight_ptr, output_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, output_stride_row,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    rows = tl.program_id(0) * ROWS_TILE_SIZE + tl.arange(0, ROWS_TILE_SIZE)
    row_ok = rows < ROWS
    acc = tl.zeros((ROWS_TILE_SIZE,), dtype=tl.float32)
    for j in range(0, D):
        x = tl.load(x_ptr + rows * x_stride_row + j * x_stride_dim, mask=row_ok, other=0.0)
        w = tl.load(weight_ptr + j * weight_stride_dim)
        acc += x * w
    tl.store(output_ptr + rows * output_stride_row, acc, mask=row_ok)
