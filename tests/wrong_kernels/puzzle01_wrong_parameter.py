"""Renames the size parameter: the grader passes N0, not N."""
import triton
import triton.language as tl

EXPECT_KIND = "signature"


@triton.jit
def add_kernel(x_ptr, z_ptr, N, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + 10.0, mask=offsets < N)
