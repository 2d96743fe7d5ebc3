# Loops over T in chunks of B1 but masks only the rows: the last, partial chunk reads past
# the end of each row (into the next row, and past the end of x for the last row).
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"
EXPECT_CASE = "classic"


@triton.jit
def sum_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        # Mistake: no `cols < T` in the mask.
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=row_mask[:, None], other=0.0)
        acc += tl.sum(tile, axis=1)
    tl.store(z_ptr + rows, acc, mask=row_mask)
