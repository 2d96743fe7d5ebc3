# Loads the output before storing to it and adds 10 only where it sees the grader's NaN fill:
# right here, wrong on a GPU, where an output holds whatever its memory last held. The second
# run, with stale values in the unwritten output, changes the result.
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "mismatch"
EXPECT_SAYS = "When the grader ran this case again with other values in the memory no program had stored yet"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    old = tl.load(z_ptr + offsets, mask=mask)
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, tl.where(old != old, x + 10.0, x), mask=mask)
