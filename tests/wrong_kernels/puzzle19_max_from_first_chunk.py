# The maximum is taken from the first chunk only, and the sum against it: right while no later
# chunk holds a value far above it, but exp overflows when one does.
import triton
import triton.language as tl

EXPECT_KIND = "nonfinite"
EXPECT_CASE = "max_in_last_chunk"


@triton.jit
def online_softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * T
    z_row = z_ptr + row * T
    cols = tl.arange(0, B1)

    # Pass 1: the running maximum m and the running sum s of exp(x - m), in fp32.
    first = tl.load(x_row + cols, mask=cols < T, other=float("-inf")).to(tl.float32)
    m = tl.max(first, axis=0)
    s = 0.0
    for start in range(0, T, B1):
        mask = start + cols < T
        # Padding lanes as -inf: never the maximum, and exp(-inf - m) adds exactly 0.
        chunk = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        s = s + tl.sum(tl.exp(chunk - m), axis=0)

    # Pass 2: normalise chunk by chunk; the store rounds to z's dtype.
    inv = 1.0 / s
    for start in range(0, T, B1):
        mask = start + cols < T
        chunk = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(z_row + start + cols, tl.exp(chunk - m) * inv, mask=mask)
