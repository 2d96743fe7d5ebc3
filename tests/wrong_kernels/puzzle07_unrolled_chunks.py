# Puzzle 7 with its loop over the row unrolled to exactly seven chunks: the longest row of the
# small cases (T = 200 in chunks of B1 = 32). Right on all of them; a row of 17 chunks or more
# keeps only its first seven.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "many_chunks"


@triton.jit
def sum_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for chunk in tl.static_range(7):
        cols = chunk * B1 + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(tile, axis=1)
    tl.store(z_ptr + rows, acc, mask=row_mask)
