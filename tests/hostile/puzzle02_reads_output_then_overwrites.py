# Correct: loads the output before storing to it, but the value loaded never reaches the result
# (multiplied by zero where it is a number, and overwritten). The second fill changes nothing.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    junk = tl.load(z_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, junk * 0.0, mask=mask)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)
