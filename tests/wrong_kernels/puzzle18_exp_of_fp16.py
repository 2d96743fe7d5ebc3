# The row is exponentiated in its own dtype: for the fp16 and bf16 cases `tl.exp` gets a half-
# precision value, and Triton's math functions take fp32 or fp64 only. The interpreter computes
# it anyway; a GPU does not compile it. (Without the maximum subtracted, exp would also overflow
# on the large-magnitude case: the compile check speaks first.)
import triton
import triton.language as tl

EXPECT_KIND = "compile"
EXPECT_CHECK = "gpu_compile"
EXPECT_SAYS = "case fp16_rows[seed=7] (N0=8, T=1000, B1=1024) gives it fp16: its `x` and `z` are float16"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x)
    tl.store(z_ptr + row * T + cols, e / tl.sum(e, axis=0), mask=mask)
