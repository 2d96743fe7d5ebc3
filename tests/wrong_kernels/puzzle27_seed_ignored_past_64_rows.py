# Rows past 64 draw with seed 0: only the largest case has more.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "past_64_rows"
EXPECT_SAYS = "row 64 ignores SEED"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    offsets = row * T + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    u = tl.where(row < 64, tl.rand(SEED, offsets), tl.rand(0, offsets))
    p = P_PERCENT / 100
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
