"""A lambda inside the kernel: the interpreter runs it, the compiler rejects it."""
import triton
import triton.language as tl

EXPECT_KIND = "compile"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    plus_ten = lambda v: v + 10.0  # noqa: E731
    tl.store(z_ptr + offsets, plus_ten(tl.load(x_ptr + offsets)))
