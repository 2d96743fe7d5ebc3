# Puzzle 3 stepping rows of z by N1 instead of N0 (the row length of z is N0, the number of
# columns). Invisible on the square classic case; on "wide" (N0=64, N1=16) the offsets
# j * 16 + i only reach 0..303 of z's 1024 elements, with rows overlapping, so the tail of
# z is never stored. The grader reports unwritten elements before wrong values.
import triton
import triton.language as tl

EXPECT_KIND = "unwritten"
EXPECT_CASE = "wide"


@triton.jit
def add_vec_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.arange(0, B0)
    rows = tl.arange(0, B1)
    x = tl.load(x_ptr + cols)
    y = tl.load(y_ptr + rows)
    z = x[None, :] + y[:, None]
    tl.store(z_ptr + rows[:, None] * N1 + cols[None, :], z)
