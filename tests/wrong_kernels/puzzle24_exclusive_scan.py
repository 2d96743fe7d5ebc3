# An exclusive scan: each element gets the sum of the elements before it, not including itself
# (z[i, 0] = 0). torch.cumsum, and this puzzle, are inclusive.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "an exclusive scan"


@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    carry = 0.0
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = cols < T
        x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0)
        tl.store(z_ptr + row * T + cols, tl.cumsum(x, axis=0) - x + carry, mask=mask)
        carry += tl.sum(x, axis=0)
