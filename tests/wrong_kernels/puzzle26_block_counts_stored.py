# Each program counts its block right (one bin at a time), then adds its counts to z with a
# load and a store, not an atomic. The interpreter runs programs one after another, so the
# totals come out right there; on a GPU two programs read the same count at once and one
# program's counts are lost. The grader reports two programs storing to one bin as a race.
import triton
import triton.language as tl

EXPECT_KIND = "race"
EXPECT_SAYS = "tl.atomic_add"


@triton.jit
def histogram_kernel(x_ptr, z_ptr, N, NBINS: tl.constexpr, B0: tl.constexpr):
    offs = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    bins = x % NBINS
    bins = tl.where(bins < 0, bins + NBINS, bins)
    for b in range(NBINS):
        count = tl.sum(((bins == b) & mask).to(tl.int32), axis=0)
        tl.store(z_ptr + b, tl.load(z_ptr + b) + count)
