# Correct: Philox itself, with the column and the row as two of its four counters.
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
    zero = tl.zeros_like(cols).to(tl.uint32)
    r0, _, _, _ = tl.philox(SEED, cols.to(tl.uint32), zero + row, zero, zero)
    u = tl.uint_to_uniform_float(r0)
    p = P_PERCENT / 100
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
