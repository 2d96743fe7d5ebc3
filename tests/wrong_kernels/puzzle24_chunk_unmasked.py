# The chunk is loaded without a mask (only the store has one): the last chunk of the last row
# reads past the end of x.
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"
EXPECT_CASE = "classic"


@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    carry = 0.0
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        x = tl.load(x_ptr + row * T + cols)
        tl.store(z_ptr + row * T + cols, tl.cumsum(x, axis=0) + carry, mask=cols < T)
        carry += tl.sum(x, axis=0)
