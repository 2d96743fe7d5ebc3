# Puzzle 4 with the strides of z swapped: column i gets stride N1 and row j stride 1
# (column-major). Offsets j + i * N1 cover 0 .. N0 * N1 - 1 exactly once, so nothing is
# out of bounds or unwritten, but the values are transposed and the classic 100 x 90 case
# already fails.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"


@triton.jit
def add_vec_block_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.program_id(0) * B0 + tl.arange(0, B0)
    rows = tl.program_id(1) * B1 + tl.arange(0, B1)
    col_mask = cols < N0
    row_mask = rows < N1
    x = tl.load(x_ptr + cols, mask=col_mask)
    y = tl.load(y_ptr + rows, mask=row_mask)
    z = x[None, :] + y[:, None]
    tl.store(z_ptr + rows[:, None] + cols[None, :] * N1, z,
             mask=row_mask[:, None] & col_mask[None, :])
