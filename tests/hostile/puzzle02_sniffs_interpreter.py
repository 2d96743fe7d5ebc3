# Behaves differently in the interpreter: there a pointer is a tensor whose `.handle` holds a
# NumPy array; on a GPU it is not. Correct on a laptop only.
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "sniffing"
EXPECT_SAYS = "handle"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    if hasattr(x_ptr.handle, "data"):
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)
