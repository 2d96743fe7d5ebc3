# Only the seed's high bits reach the generator: neighbouring seeds share a mask.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "many_seeds"
EXPECT_SAYS = "the two seeds give one mask"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    offsets = row * T + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    u = tl.rand(SEED >> 8, offsets)
    p = P_PERCENT / 100
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
