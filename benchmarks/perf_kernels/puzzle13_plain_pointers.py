"""The reference's tiles and loop with plain pointers and masks instead of block pointers: the same
loads in the same order, so the same traffic and coalescing; expect the reference's time."""
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
    for d in range(0, D, D_TILE_SIZE):
        cols = d + tl.arange(0, D_TILE_SIZE)
        col_ok = cols < D
        x = tl.load(x_ptr + rows[:, None] * x_stride_row + cols[None, :] * x_stride_dim,
                    mask=row_ok[:, None] & col_ok[None, :], other=0.0, eviction_policy="evict_first")
        w = tl.load(weight_ptr + cols * weight_stride_dim, mask=col_ok, other=0.0)
        acc += tl.sum(x * w[None, :], axis=1)
    tl.store(output_ptr + rows * output_stride_row, acc, mask=row_ok)
