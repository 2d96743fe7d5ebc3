# Puzzle 2, where each program at the large size also loads the block the previous program
# stores, and keeps it in a way no value shows (NaN or not, it adds zero): on a GPU that block
# may not be there yet. Only the large case runs a sample of the programs, so only there is the
# neighbour's block missing; the grader must see the load itself.
import triton
import triton.language as tl

EXPECT_KIND = "race"
EXPECT_CASE = "past_16_bit_offsets"
EXPECT_SAYS = "it had not stored itself"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, x + 10.0, mask=mask)
    if N0 > 32768:
        if pid > 0:
            before = tl.load(z_ptr + offsets - B0)
            tl.store(z_ptr + offsets, x + 10.0 + tl.where(before == before, 0.0, 0.0), mask=mask)
