# Correct: @triton.jit with options, a parameter with a default the puzzle never passes, and a
# module constant built from literal arithmetic.
import triton
import triton.language as tl

TEN = tl.constexpr(20 // 2)
EXPECT_STATUS = "pass"


@triton.jit(do_not_specialize=["N0"])
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr, SCALE: tl.constexpr = 1):
    offsets = tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) * SCALE + TEN)
