# Correct: one Philox word per element from tl.randint, its top 24 bits read as a uniform
# number in [0, 1).
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    offsets = row * T + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    r = tl.randint(SEED, offsets)
    u = (r >> 8).to(tl.float32) * (1.0 / 16777216)
    p = P_PERCENT / 100
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
