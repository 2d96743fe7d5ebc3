# The tutorial's stream with a seed of its own, 42, instead of SEED: the same mask every step.
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
    keep = tl.rand(42, offsets) > p
    tl.store(z_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=mask)
