# Puzzle 13 with block-pointer loads and store that leave out `boundary_check`. Without it a
# block pointer does no edge checks at all: the `tails` case (ROWS=100, D=200, tiles 16 x 64)
# has its last program read rows 100..111 and its last D step read columns 200..255, past the
# end of x. The interpreter checks every access and reports the load as out of bounds; the
# `classic` case, an exact multiple of its tiles, passes.
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"
EXPECT_CASE = "tails"


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
        offsets=(row_tile * ROWS_TILE_SIZE, 0), block_shape=(ROWS_TILE_SIZE, D_TILE_SIZE), order=(1, 0),
    )
    weight_block_ptr = tl.make_block_ptr(
        weight_ptr, shape=(D,), strides=(weight_stride_dim,),
        offsets=(0,), block_shape=(D_TILE_SIZE,), order=(0,),
    )
    output_block_ptr = tl.make_block_ptr(
        output_ptr, shape=(ROWS,), strides=(output_stride_row,),
        offsets=(row_tile * ROWS_TILE_SIZE,), block_shape=(ROWS_TILE_SIZE,), order=(0,),
    )
    acc = tl.zeros((ROWS_TILE_SIZE,), dtype=tl.float32)
    for _ in range(tl.cdiv(D, D_TILE_SIZE)):
        x = tl.load(x_block_ptr)
        w = tl.load(weight_block_ptr)
        acc += tl.sum(x * w[None, :], axis=1)
        x_block_ptr = tl.advance(x_block_ptr, (0, D_TILE_SIZE))
        weight_block_ptr = tl.advance(weight_block_ptr, (D_TILE_SIZE,))
    tl.store(output_block_ptr, acc)
