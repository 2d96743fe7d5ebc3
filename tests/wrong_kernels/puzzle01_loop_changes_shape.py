"""A loop-carried scalar that becomes a block inside the loop."""
import triton
import triton.language as tl

EXPECT_KIND = "compile"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    acc = 10.0
    for _ in range(0, N0, B0):
        acc = acc + tl.load(x_ptr + offsets)
    tl.store(z_ptr + offsets, acc)
