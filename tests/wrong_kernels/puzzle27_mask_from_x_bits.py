# The counter mixes in x's bits: a fair mask for each x, but the backward runs on grad_output
# with the same seed and drops other elements than the forward did.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "run on another x with the same SEED"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    offsets = row * T + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    u = tl.rand(SEED, offsets ^ x.to(tl.int32, bitcast=True))
    p = P_PERCENT / 100
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
