# Puzzle 3 computing z[i, j] = x[i] + y[j], i.e. an N0 x N1 matrix, and storing it
# row-major as such (offset i * N1 + j). It covers exactly N0 * N1 elements, so nothing is
# out of bounds or unwritten, but the values land transposed. The classic 32 x 32 case
# already fails (x != y, so the transpose differs); the non-square cases fail too.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"


@triton.jit
def add_vec_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    i = tl.arange(0, B0)
    j = tl.arange(0, B1)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + j)
    z = x[:, None] + y[None, :]
    tl.store(z_ptr + i[:, None] * N1 + j[None, :], z)
