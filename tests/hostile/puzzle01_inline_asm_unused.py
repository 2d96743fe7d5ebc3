# Correct: a line of PTX whose value never reaches the output (multiplied by zero). Stood in for
# by two different functions, the outputs are the same, so the kernel is graded on its values
# and passes, as on a GPU.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(z_ptr + offsets, x + 10.0 + y * 0)
