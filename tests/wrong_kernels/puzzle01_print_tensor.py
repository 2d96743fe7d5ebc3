"""Debug print of a tensor left in: Python's print works in the interpreter only."""
import triton
import triton.language as tl

EXPECT_KIND = "compile"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    print(x)
    tl.store(z_ptr + offsets, x + 10.0)
