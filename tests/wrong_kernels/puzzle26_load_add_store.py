# The histogram updated with a load, +1 and a store instead of an atomic: lanes of one block
# that hit the same bin all read the same count and all write count + 1, so each bin grows by
# at most 1 per block (and on a GPU, programs running at once lose each other's updates too).
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "few_bins"
EXPECT_SAYS = "tl.atomic_add"


@triton.jit
def histogram_kernel(x_ptr, z_ptr, N, NBINS: tl.constexpr, B0: tl.constexpr):
    offs = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    bins = x % NBINS
    bins = tl.where(bins < 0, bins + NBINS, bins)
    count = tl.load(z_ptr + bins, mask=mask)
    tl.store(z_ptr + bins, count + 1, mask=mask)
