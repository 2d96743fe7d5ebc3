# The load is masked (padding lanes read 0) but the atomic is not: every padding lane of the
# last block adds 1 to bin 0.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "padding lanes counted in bin 0"


@triton.jit
def histogram_kernel(x_ptr, z_ptr, N, NBINS: tl.constexpr, B0: tl.constexpr):
    offs = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    bins = x % NBINS
    bins = tl.where(bins < 0, bins + NBINS, bins)
    tl.atomic_add(z_ptr + bins, 1)
