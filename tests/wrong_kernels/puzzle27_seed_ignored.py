# The random numbers are drawn with a constant seed instead of SEED: every call, every
# training step, drops the same elements.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "SEED ignored"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    cols = block * B1 + tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    draws = row * tl.cdiv(T, 4) + block * (B1 // 4) + tl.arange(0, B1 // 4)
    r0, r1, r2, r3 = tl.rand4x(0, draws)
    u = tl.reshape(tl.join(tl.join(r0, r2), tl.join(r1, r3)), [B1])
    p = P_PERCENT / 100
    tl.store(z_ptr + row * T + cols, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
