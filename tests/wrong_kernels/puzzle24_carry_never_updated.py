# A carry is added to every chunk, but nothing ever adds to it: it stays 0, and the scan
# restarts in every chunk as if there were no carry at all.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "restarts at 0 in every chunk"


@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = cols < T
        x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0)
        tl.store(z_ptr + row * T + cols, tl.cumsum(x, axis=0) + carry, mask=mask)
