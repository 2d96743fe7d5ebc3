# Honest for the small cases; past 30000 elements (only the large case, run without the bounds
# hooks) it reads the output first and adds 10 only where it sees the NaN fill.
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "mismatch"
EXPECT_SAYS = "past_16_bit_offsets"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    if N0 > 30000:
        old = tl.load(z_ptr + offsets, mask=mask)
        tl.store(z_ptr + offsets, tl.where(old != old, x + 10.0, x), mask=mask)
    else:
        tl.store(z_ptr + offsets, x + 10.0, mask=mask)
