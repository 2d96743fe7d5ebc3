# Adds 10 only where the output's memory is not zero: right under the grader's NaN fill, wrong on a
# GPU whose fresh memory is zeros. The second fill holds zeros among its stale values.
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "mismatch"
EXPECT_SAYS = "the result depends on what it held"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    old = tl.load(z_ptr + offsets, mask=mask)
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, tl.where(old == 0.0, x, x + 10.0), mask=mask)
