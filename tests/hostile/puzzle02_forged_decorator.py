# The forged launcher as a decorator, and Triton's decorator re-bound to it by name: `jit` here
# is not triton.jit, whatever it is called.
import triton
import triton.language as tl
from triton.runtime.jit import JITFunction

EXPECT_STATUS = ("fail", "not_attempted")  # graded alone: no such kernel; in a class: not attempted


class Forged(JITFunction):
    def __getitem__(self, grid):
        def launch(x, z, *args, **kwargs):
            z.copy_(x + 10)
        return launch


jit = Forged


@jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pass
