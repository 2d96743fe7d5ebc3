# The random offsets restart at 0 in every block (tl.arange alone): all blocks of all rows
# draw the same B1 numbers.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "restart at 0 in each block"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    # The flat index names the element: the address, and the counter of its random number.
    offsets = row * T + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    p = P_PERCENT / 100
    # Philox from (SEED, offset) alone: the backward regenerates this mask, nothing is stored.
    u = tl.rand(SEED, tl.arange(0, B1))
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
