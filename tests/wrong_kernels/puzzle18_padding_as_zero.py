# Padding lanes loaded as 0 instead of -inf: each adds exp(0 - m) to the row's sum, so every
# row shorter than the block comes out too small.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "other=float('-inf')"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(z_ptr + row * T + cols, e / tl.sum(e, axis=0), mask=mask)
