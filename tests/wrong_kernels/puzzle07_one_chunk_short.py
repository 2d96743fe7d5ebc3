# The loop stops one chunk early, `range(0, T - B1, B1)`: the columns of the last chunk are
# never added, and a row shorter than one chunk is never read at all (its sum stays 0).
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "row_shorter_than_block"


@triton.jit
def sum_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T - B1, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(tile, axis=1)
    tl.store(z_ptr + rows, acc, mask=row_mask)
