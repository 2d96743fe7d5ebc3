# Each program also scribbles zeros over the next program's block, which that program then
# overwrites. Right when programs run in order (as the interpreter runs them), wrong whenever
# a later block finishes first, as it may on a GPU.
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "race"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets + B0, tl.zeros([B0], dtype=tl.float32), mask=offsets + B0 < N0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)
