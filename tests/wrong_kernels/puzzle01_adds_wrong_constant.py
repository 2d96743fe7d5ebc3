"""Adds 1 instead of 10."""
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + 1.0)
