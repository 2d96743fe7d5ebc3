# Correct: `and` between scalars (a program id, a size) keeps its meaning, and terms of libdevice
# functions numpy lacks (`j0`, `erfinv`), here multiplied by zero, run through SciPy in the
# interpreter: the kernel passes on the CPU as it does on a GPU.
import triton
import triton.language as tl
from triton.language.extra import libdevice

EXPECT_STATUS = "pass"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    if pid >= 0 and not (N0 < 0):
        x = tl.load(x_ptr + offsets, mask=mask)
        y = x + 10.0 + libdevice.j0(x) * 0 + libdevice.erfinv(x / (1.0 + tl.abs(x))) * 0
        tl.store(z_ptr + offsets, y, mask=mask)
