# Tests for NaN with tl.maximum, expecting numpy's meaning: maximum(0, nan) is nan, so the test
# is false and 10 is added. On a GPU tl.maximum ignores a NaN operand (PTX max.f32 returns
# the other one), the test is true for every element and 11 is added: the interpreter must
# say so too. (`propagate_nan=tl.PropagateNan.ALL` asks for the NaN.)
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "max abs err 1,"


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    probe = tl.maximum(x * 0.0, float("nan"))  # "nan unless maximum drops it"
    tl.store(z_ptr + offsets, x + 10.0 + tl.where(probe == 0.0, 1.0, 0.0))
