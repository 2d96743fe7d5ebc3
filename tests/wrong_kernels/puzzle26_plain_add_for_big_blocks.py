# Histogram that counts each block privately with tl.histogram and, for blocks of 1024 or more
# ("few programs, they rarely meet"), adds the counts to z with a plain load, add and store
# instead of an atomic. Smaller blocks take the atomic path, as in every small case. At 40,000
# elements in blocks of 1024, 40 programs each read, add to and write all 16 bins: on a GPU two
# of them read the same count and one's update is lost. Run one program after another, in
# order or in reverse, the counts come out exact: only a run that reports two programs storing
# to one element without an atomic (as the small cases are run) catches it, or one that runs
# the programs together, as a GPU does, and loses the updates.
import triton
import triton.language as tl

EXPECT_KIND = "race"
EXPECT_CASE = "past_16_bit_offsets"
EXPECT_SAYS = "another program of the same launch"


@triton.jit
def histogram_kernel(x_ptr, z_ptr, N, NBINS: tl.constexpr, B0: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * B0 + tl.arange(0, B0)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    bins = x % NBINS
    bins = tl.where(bins < 0, bins + NBINS, bins)
    if B0 >= 1024:  # compile-time: big blocks
        counts = tl.histogram(bins, NBINS, mask=mask)
        every = tl.arange(0, NBINS)
        tl.store(z_ptr + every, tl.load(z_ptr + every) + counts)
    else:
        tl.atomic_add(z_ptr + bins, 1, mask=mask)
