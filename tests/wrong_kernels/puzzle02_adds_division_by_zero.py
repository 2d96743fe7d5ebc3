"""Adds `7 // zero` for a zero known only at run time: numpy gives 0, so the interpreter used
to pass it, while a GPU gives -1 and the kernel adds 9. The interpreter now divides as the GPU."""
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "yours 9.14446, expected 10.1445"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    zero = (x > 1e30).to(tl.int32)  # zero everywhere, as the values say at run time
    tl.store(z_ptr + offsets, x + 10.0 + (7 // zero), mask=mask)
