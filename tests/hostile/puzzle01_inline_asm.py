# Correct on a GPU: the constant added by a line of PTX. The interpreter cannot run PTX, so
# it must not call this a failure either: the outcome is interpreter_limit, with the command
# that grades it on a GPU, and the exit code of a run that failed nothing.
import triton
import triton.language as tl

EXPECT_STATUS = "interpreter_limit"
EXPECT_SAYS = "python -m grader puzzle01 --device cuda"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    z = tl.inline_asm_elementwise("add.f32 $0, $1, 0f41200000;", "=r,r", [x],  # x + 10.0
                                  dtype=tl.float32, is_pure=True, pack=1)
    tl.store(z_ptr + offsets, z)
