# The running sum is never rescaled when a chunk raises the maximum: the terms added before
# keep their old, too large scale, so most rows come out too small.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "tl.exp(m - m_new)"


@triton.jit
def online_softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * T
    z_row = z_ptr + row * T
    cols = tl.arange(0, B1)

    # Pass 1: the running maximum m and the running sum s of exp(x - m), in fp32.
    m = float("-inf")
    s = 0.0
    for start in range(0, T, B1):
        mask = start + cols < T
        # Padding lanes as -inf: never the maximum, and exp(-inf - m) adds exactly 0.
        chunk = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(chunk, axis=0))
        s = s + tl.sum(tl.exp(chunk - m_new), axis=0)
        m = m_new

    # Pass 2: normalise chunk by chunk; the store rounds to z's dtype.
    inv = 1.0 / s
    for start in range(0, T, B1):
        mask = start + cols < T
        chunk = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(z_row + start + cols, tl.exp(chunk - m) * inv, mask=mask)
