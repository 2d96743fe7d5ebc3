"""B0 declared without tl.constexpr, then used as a tl.arange bound."""
import triton
import triton.language as tl

EXPECT_KIND = "compile"  # caught by the GPU compile check, which runs first
EXPECT_CHECK = "gpu_compile"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0):
    offsets = tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + 10.0)
