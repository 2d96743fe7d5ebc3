# Puzzle 4 stepping rows of z by N1 instead of N0. In the classic case (N0=100, N1=90) the
# masked offsets j * 90 + i reach only 0..8109 of z's 9000 elements (rows overlap by 10),
# so nothing is out of bounds but the end of z is never stored. The grader reports
# unwritten elements before wrong values.
import triton
import triton.language as tl

EXPECT_KIND = "unwritten"
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
    tl.store(z_ptr + rows[:, None] * N1 + cols[None, :], z,
             mask=row_mask[:, None] & col_mask[None, :])
