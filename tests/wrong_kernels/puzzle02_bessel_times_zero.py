"""A wrong constant (+11), with a `libdevice.j0(x) * 0` term that used to make the interpreter
give up (no counterpart for j0), so the verdict was neither a pass nor a fail. j0 now runs
through SciPy, and the wrong constant fails."""
import triton
import triton.language as tl
from triton.language.extra import libdevice

EXPECT_KIND = "mismatch"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, x + 11.0 + libdevice.j0(x) * 0, mask=mask)
