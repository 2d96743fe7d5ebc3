# Correct: stores each element, then loads it back and stores it again. Every read of the output
# comes after a store to that element, so nothing depends on what the output held before.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)
    tl.store(z_ptr + offsets, tl.load(z_ptr + offsets, mask=mask) + 10.0, mask=mask)
