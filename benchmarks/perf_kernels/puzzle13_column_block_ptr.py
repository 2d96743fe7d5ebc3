"""Walks x one column at a time through block pointers: a (ROWS_TILE_SIZE, 1) block advanced one
column per step, so each load brings 4 useful bytes of a 32-byte sector from rows 4 KiB apart,
with 4 lanes busy at the bench's 4-row tiles; 1024 dependent steps per program. The same walk as
puzzle13_column_at_a_time, written with block pointers; expect an order of magnitude slower
than the reference."""
import triton
import triton.language as tl


@triton.jit
def weighted_sum_fwd(
    x_ptr, weight_ptr, output_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, output_stride_row,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    row_tile = tl.program_id(0)
    x_block_ptr = tl.make_block_ptr(
        x_ptr, shape=(ROWS, D), strides=(x_stride_row, x_stride_dim),
        offsets=(row_tile * ROWS_TILE_SIZE, 0), block_shape=(ROWS_TILE_SIZE, 1), order=(1, 0),
    )
    weight_block_ptr = tl.make_block_ptr(
        weight_ptr, shape=(D,), strides=(weight_stride_dim,), offsets=(0,), block_shape=(1,), order=(0,),
    )
    output_block_ptr = tl.make_block_ptr(
        output_ptr, shape=(ROWS,), strides=(output_stride_row,),
        offsets=(row_tile * ROWS_TILE_SIZE,), block_shape=(ROWS_TILE_SIZE,), order=(0,),
    )
    acc = tl.zeros((ROWS_TILE_SIZE,), dtype=tl.float32)
    for _ in range(D):
        x = tl.load(x_block_ptr, boundary_check=(0, 1), padding_option="zero")
        w = tl.load(weight_block_ptr, boundary_check=(0,), padding_option="zero")
        acc += tl.sum(x * w[None, :], axis=1)
        x_block_ptr = tl.advance(x_block_ptr, (0, 1))
        weight_block_ptr = tl.advance(weight_block_ptr, (1,))
    tl.store(output_block_ptr, acc, boundary_check=(0,))
