"""A helper defined inside the kernel."""
import triton
import triton.language as tl

EXPECT_KIND = "compile"  # caught by the GPU compile check, which runs first
EXPECT_CHECK = "gpu_compile"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    def plus_ten(v):
        return v + 10.0

    offsets = tl.arange(0, B0)
    tl.store(z_ptr + offsets, plus_ten(tl.load(x_ptr + offsets)))
