"""The reference descriptor backward with D tiles of 64 instead of the bench's 512 (a heuristic
overrides D_TILE_SIZE): sixteen 16 x 64 TMA loads and stores of 4 KiB per row tile, and 64-wide
partial-row stores; expect somewhat slower."""
import triton
import triton.language as tl


@triton.heuristics({"D_TILE_SIZE": lambda args: 64})
@triton.jit
def weighted_sum_bwd_desc(
    x_ptr, weight_ptr, grad_output_ptr, grad_x_ptr, partial_grad_weight_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, grad_output_stride_row,
    grad_x_stride_row, grad_x_stride_dim,
    partial_grad_weight_stride_tile, partial_grad_weight_stride_dim,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    row_tile = tl.program_id(0)
    row_start = row_tile * ROWS_TILE_SIZE
    # The matrices go through descriptors, each with its last stride the literal 1.
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[ROWS, D], strides=[x_stride_row, 1],
                                       block_shape=[ROWS_TILE_SIZE, D_TILE_SIZE])
    grad_x_desc = tl.make_tensor_descriptor(grad_x_ptr, shape=[ROWS, D], strides=[grad_x_stride_row, 1],
                                            block_shape=[ROWS_TILE_SIZE, D_TILE_SIZE])
    partial_desc = tl.make_tensor_descriptor(partial_grad_weight_ptr, shape=[tl.num_programs(0), D],
                                             strides=[partial_grad_weight_stride_tile, 1],
                                             block_shape=[1, D_TILE_SIZE])

    # The vectors through plain masked pointers; rows past ROWS read as 0 and add nothing.
    rows = row_start + tl.arange(0, ROWS_TILE_SIZE)
    g = tl.load(grad_output_ptr + rows * grad_output_stride_row, mask=rows < ROWS, other=0.0)
    for d in range(0, D, D_TILE_SIZE):
        x = x_desc.load([row_start, d])
        cols = d + tl.arange(0, D_TILE_SIZE)
        w = tl.load(weight_ptr + cols * weight_stride_dim, mask=cols < D, other=0.0)
        grad_x_desc.store([row_start, d], g[:, None] * w[None, :])  # rows past ROWS are dropped
        partial = tl.sum(x * g[:, None], axis=0)
        partial_desc.store([row_tile, d], partial[None, :])
