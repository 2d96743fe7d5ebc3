# Treats each B1-wide chunk as if it were the whole row: every chunk is normalised by its
# own maximum and sum instead of the row's.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        col_mask = cols < T
        offsets = rows[:, None] * T + cols[None, :]
        tile = tl.load(x_ptr + offsets, mask=row_mask[:, None] & col_mask[None, :], other=0.0)
        tile = tl.where(col_mask[None, :], tile, float("-inf"))
        # Mistake: the maximum and the denominator of this chunk only.
        e = tl.exp(tile - tl.max(tile, axis=1)[:, None])
        tl.store(z_ptr + offsets, e / tl.sum(e, axis=1)[:, None],
                 mask=row_mask[:, None] & col_mask[None, :])
