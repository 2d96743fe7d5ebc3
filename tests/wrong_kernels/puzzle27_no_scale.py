# The survivors are kept as they are, not divided by 1 - p: the output's expected value shrinks
# by a factor 1 - p, and training sees other activations than inference.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "not scaled by 1 / (1 - p)"


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
    u = tl.rand(SEED, offsets)
    tl.store(z_ptr + offsets, tl.where(u > p, x, 0.0), mask=mask)
