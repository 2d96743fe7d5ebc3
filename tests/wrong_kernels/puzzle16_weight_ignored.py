# Puzzle 16 that loads the weights but sums the rows of x unweighted.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "It looks like the weight ignored"


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
        # Mistake: the weights are loaded but never used.
        acc += tl.sum(x, axis=1)
    # The output vector goes through a plain masked store: a 1-D descriptor store of a length
    # that is not a multiple of 16 bytes overruns the end on a GPU.
    rows = row_start + tl.arange(0, ROWS_TILE_SIZE)
    tl.store(output_ptr + rows * output_stride_row, acc, mask=rows < ROWS)
