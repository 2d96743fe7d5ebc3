"""The reference descriptor forward with D tiles of 64 instead of the bench's 1024 (a heuristic
overrides D_TILE_SIZE): sixteen 8 x 64 TMA loads of 2 KiB per row tile instead of one of 32 KiB;
expect somewhat slower."""
import triton
import triton.language as tl


@triton.heuristics({"D_TILE_SIZE": lambda args: 64})
@triton.jit
def weighted_sum_fwd_desc(
    x_ptr, weight_ptr, output_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, output_stride_row,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    # A descriptor's last stride must be the literal 1: TMA needs the last dim contiguous.
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[ROWS, D], strides=[x_stride_row, 1],
                                       block_shape=[ROWS_TILE_SIZE, D_TILE_SIZE])
    row_start = tl.program_id(0) * ROWS_TILE_SIZE
    acc = tl.zeros((ROWS_TILE_SIZE,), dtype=tl.float32)
    for d in range(0, D, D_TILE_SIZE):
        x = x_desc.load([row_start, d])  # zero-filled past ROWS and D
        cols = d + tl.arange(0, D_TILE_SIZE)
        w = tl.load(weight_ptr + cols * weight_stride_dim, mask=cols < D, other=0.0)
        acc += tl.sum(x * w[None, :], axis=1)
    # The output vector goes through a plain masked store: a 1-D descriptor store of a length
    # that is not a multiple of 16 bytes overruns the end on a GPU.
    rows = row_start + tl.arange(0, ROWS_TILE_SIZE)
    tl.store(output_ptr + rows * output_stride_row, acc, mask=rows < ROWS)
