"""A helper left undecorated: the interpreter calls it as Python, a GPU compile refuses it."""
import triton
import triton.language as tl

EXPECT_KIND = "compile"  # caught by the GPU compile check, which runs first
EXPECT_SAYS = "`ten` is called at line 17: `tl.store(z_ptr + offsets, x + ten(B0))`: RuntimeError: Unsupported function referenced: <function ten>. Fix: a kernel may call only Triton functions: decorate `ten` with `@triton.jit`"


def ten(n):
    return 10.0


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    tl.store(z_ptr + offsets, x + ten(B0))
