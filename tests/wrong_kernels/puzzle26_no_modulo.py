# The values are used as bins as they are: the grader's x are random 32-bit integers, so the
# atomics land far outside z.
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"
EXPECT_CASE = "classic"


@triton.jit
def histogram_kernel(x_ptr, z_ptr, N, NBINS: tl.constexpr, B0: tl.constexpr):
    offs = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(z_ptr + x, 1, mask=mask)
