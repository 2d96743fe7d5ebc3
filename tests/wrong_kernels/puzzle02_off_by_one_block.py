# Puzzle 2 with the block start off by one block: program p starts at (p + 1) * B0.
# Load and store use the same (masked) offsets, so every element that is written holds
# the right value and nothing is touched out of bounds; but no program starts at 0, so
# z[0:B0] is never stored. Hence "unwritten", not "mismatch".
import triton
import triton.language as tl

EXPECT_KIND = "unwritten"
EXPECT_CASE = "classic"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = (tl.program_id(0) + 1) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, x + 10.0, mask=mask)
