"""Adds in place into x, then copies x to z."""
import triton
import triton.language as tl

EXPECT_KIND = "input_modified"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets) + 10.0
    tl.store(x_ptr + offsets, x)
    tl.store(z_ptr + offsets, x)
