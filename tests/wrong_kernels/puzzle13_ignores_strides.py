# Puzzle 13 with hand-made offsets that assume x is stored row by row: element (r, c) at
# r * D + c. That is right for every contiguous case, but the `transposed` case stores x
# column-major (x_stride_row = 1, x_stride_dim = ROWS): the same addresses are all inside x,
# so nothing is out of bounds, yet they hold other elements and the sums come out wrong.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "transposed"


@triton.jit
def weighted_sum_fwd(
    x_ptr, weight_ptr, output_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, output_stride_row,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    rows = tl.program_id(0) * ROWS_TILE_SIZE + tl.arange(0, ROWS_TILE_SIZE)
    row_mask = rows < ROWS
    acc = tl.zeros((ROWS_TILE_SIZE,), dtype=tl.float32)
    for start in range(0, D, D_TILE_SIZE):
        cols = start + tl.arange(0, D_TILE_SIZE)
        col_mask = cols < D
        x = tl.load(x_ptr + rows[:, None] * D + cols[None, :],
                    mask=row_mask[:, None] & col_mask[None, :], other=0.0)
        w = tl.load(weight_ptr + cols, mask=col_mask, other=0.0)
        acc += tl.sum(x * w[None, :], axis=1)
    tl.store(output_ptr + rows, acc, mask=row_mask)
