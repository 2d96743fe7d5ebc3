"""Stores a block of the wrong length: a Python error inside the kernel."""
import triton
import triton.language as tl

EXPECT_KIND = "compile"  # caught by the GPU compile check, which runs first


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    wide = tl.arange(0, 2 * B0)
    x = tl.load(x_ptr + wide, mask=wide < N0)
    tl.store(z_ptr + offsets, x + 10.0)
