# A launcher forged from Triton's own class: its __getitem__ would write the expected answer
# from Python at launch time, and its trivial body compiles. Neither the class (its base is not
# torch.autograd.Function) nor the call that builds the kernel survive the definitions-only
# import, and a JITFunction subclass would not be launched anyway.
import triton
import triton.language as tl
from triton.runtime.jit import JITFunction

EXPECT_STATUS = ("fail", "not_attempted")  # graded alone: no such kernel; in a class: not attempted


class Forged(JITFunction):
    def __getitem__(self, grid):
        def launch(x, z, *args, **kwargs):
            z.copy_(x + 10)
        return launch


def _body(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pass


add_kernel = Forged(_body)
