# `tl.atomic_add(z, 0.0)` returns what the output held: the grader's NaN fill here, which the
# kernel tests for; stale memory on a GPU.
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "mismatch"
EXPECT_SAYS = "an atomic reads the element it updates"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    seen = tl.atomic_add(z_ptr + offsets, 0.0, mask=mask)
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, tl.where(seen == seen, x, x + 10.0), mask=mask)
