# The Triton tutorial's shape, with the random number replaced by a hash of the element's
# position: a fair-looking mask, the same for every seed, so every training step drops the same elements.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "the two seeds give one mask"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    offsets = row * T + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    p = P_PERCENT / 100
    h = offsets.to(tl.uint32) * 747796405 + 2891336453  # a PCG-style hash of the element's index alone
    h = ((h >> ((h >> 28) + 4)) ^ h) * 277803737
    u = ((h >> 22) ^ h).to(tl.float32) / 4294967296.0
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
