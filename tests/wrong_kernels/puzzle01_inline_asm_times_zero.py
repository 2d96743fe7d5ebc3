"""A wrong constant (+11), beside a line of PTX multiplied by zero: the interpreter cannot run the
PTX, and this used to make the verdict "neither a pass nor a fail". The PTX is stood in for by two
different functions; the outputs are the same under both, so the case is graded on its values."""
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "max abs err 1,"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(z_ptr + offsets, x + 11.0 + y * 0)
