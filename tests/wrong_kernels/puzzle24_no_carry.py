# Each chunk is scanned on its own: the row's running total restarts at 0 in every chunk, so
# every column from the second chunk on misses the sum of the chunks before it.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "restarts at 0 in every chunk"


@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = cols < T
        x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0)
        tl.store(z_ptr + row * T + cols, tl.cumsum(x, axis=0), mask=mask)
