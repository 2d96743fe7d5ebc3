"""Stores a long way past the end of z: on a GPU an illegal memory access, which must not take
down the grader; in the interpreter an out-of-bounds report before memory is touched."""
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    far = offsets.to(tl.int64) + (1 << 40)
    tl.store(z_ptr + far, tl.load(x_ptr + offsets) + 10.0)
