"""Uses the runtime size N0 as the tl.arange bound: fine in the interpreter, not on a GPU."""
import triton
import triton.language as tl

EXPECT_KIND = "compile"  # caught by the GPU compile check, which runs first
EXPECT_CHECK = "gpu_compile"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, N0)
    x = tl.load(x_ptr + offsets)
    tl.store(z_ptr + offsets, x + 10.0)
