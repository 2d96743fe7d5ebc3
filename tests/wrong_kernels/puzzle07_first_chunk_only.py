# Puzzle 7 without the loop over the row: each program sums the first B1 columns only, as if
# a row always fitted in one block. Right only where T <= B1.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "It looks like a sum of the first chunk only"


@triton.jit
def sum_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    cols = tl.arange(0, B1)
    mask = row_mask[:, None] & (cols < T)[None, :]
    tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
    tl.store(z_ptr + rows, tl.sum(tile, axis=1), mask=row_mask)
