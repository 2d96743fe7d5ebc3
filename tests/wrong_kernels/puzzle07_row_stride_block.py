# Puzzle 7 stepping rows of x by the block size B1 instead of the row length T, with a correct
# mask. Row 0 is summed right; every later row reads from the wrong place, and where the rows
# are shorter than the block the last ones run past the end of x. The message must name the
# stride, not blame the mask (issue 34).
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"  # the first case, classic: rows 1 on read the wrong place
EXPECT_SAYS = "the row stride: `rows[:, None] * B1` steps `B1` elements from one row to the next, but a row of `x` is `T` elements long"
EXPECT_CASE = "classic"


@triton.jit
def sum_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        tile = tl.load(x_ptr + rows[:, None] * B1 + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(tile, axis=1)
    tl.store(z_ptr + rows, acc, mask=row_mask)
