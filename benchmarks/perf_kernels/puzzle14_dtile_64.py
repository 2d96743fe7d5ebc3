"""The reference block-pointer backward with D tiles of 64 instead of the bench's 1024 (a heuristic
overrides D_TILE_SIZE): 16 steps of 32 x 64 tiles per program, each with its own partial-row store,
on 8 warps; fewer bytes in flight per step; expect somewhat slower."""
import triton
import triton.language as tl


@triton.heuristics({"D_TILE_SIZE": lambda args: 64})
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
    n_row_tiles = tl.num_programs(0)
    row_start = row_tile * ROWS_TILE_SIZE

    grad_output_block_ptr = tl.make_block_ptr(
        grad_output_ptr, shape=(ROWS,), strides=(grad_output_stride_row,),
        offsets=(row_start,), block_shape=(ROWS_TILE_SIZE,), order=(0,),
    )
    x_block_ptr = tl.make_block_ptr(
        x_ptr, shape=(ROWS, D), strides=(x_stride_row, x_stride_dim),
        offsets=(row_start, 0), block_shape=(ROWS_TILE_SIZE, D_TILE_SIZE), order=(1, 0),
    )
    weight_block_ptr = tl.make_block_ptr(
        weight_ptr, shape=(D,), strides=(weight_stride_dim,),
        offsets=(0,), block_shape=(D_TILE_SIZE,), order=(0,),
    )
    grad_x_block_ptr = tl.make_block_ptr(
        grad_x_ptr, shape=(ROWS, D), strides=(grad_x_stride_row, grad_x_stride_dim),
        offsets=(row_start, 0), block_shape=(ROWS_TILE_SIZE, D_TILE_SIZE), order=(1, 0),
    )
    partial_block_ptr = tl.make_block_ptr(
        partial_grad_weight_ptr, shape=(n_row_tiles, D),
        strides=(partial_grad_weight_stride_tile, partial_grad_weight_stride_dim),
        offsets=(row_tile, 0), block_shape=(1, D_TILE_SIZE), order=(1, 0),
    )

    g = tl.load(grad_output_block_ptr, boundary_check=(0,), padding_option="zero")
    for _ in range(tl.cdiv(D, D_TILE_SIZE)):
        x = tl.load(x_block_ptr, boundary_check=(0, 1), padding_option="zero")
        w = tl.load(weight_block_ptr, boundary_check=(0,), padding_option="zero")
        tl.store(grad_x_block_ptr, g[:, None] * w[None, :], boundary_check=(0, 1))
        partial = tl.sum(x * g[:, None], axis=0)
        tl.store(partial_block_ptr, partial[None, :], boundary_check=(1,))

        x_block_ptr = tl.advance(x_block_ptr, (0, D_TILE_SIZE))
        weight_block_ptr = tl.advance(weight_block_ptr, (D_TILE_SIZE,))
        grad_x_block_ptr = tl.advance(grad_x_block_ptr, (0, D_TILE_SIZE))
        partial_block_ptr = tl.advance(partial_block_ptr, (0, D_TILE_SIZE))
