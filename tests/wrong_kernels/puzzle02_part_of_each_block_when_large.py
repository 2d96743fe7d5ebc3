# Puzzle 2, where past 32768 elements each program stores only the first half of its block (a
# store mask written for a smaller block). The values it stores are right: only a large case
# sees it, and there only a sample of the programs runs, so the sample must not pass for the
# launch: each program stores half a cell, and the grader runs the whole launch instead.
import triton
import triton.language as tl

EXPECT_KIND = "unwritten"
EXPECT_CASE = "past_16_bit_offsets"
EXPECT_SAYS = "were never written"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    if N0 > 32768:
        mask = mask & (tl.arange(0, B0) < B0 // 2)
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, x + 10.0, mask=mask)
