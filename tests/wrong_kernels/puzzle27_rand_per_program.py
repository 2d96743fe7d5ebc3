# The counters number the lanes of each program, and the seed is offset by the program: a mask of
# the program that draws it, so another block size (or the backward, launched otherwise) draws another.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "not of the program that draws it"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    offsets = row * T + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    p = P_PERCENT / 100
    keep = tl.rand(SEED + tl.program_id(1), row * B1 + tl.arange(0, B1)) > p
    tl.store(z_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=mask)
