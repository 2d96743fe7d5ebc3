# Online softmax whose running maximum starts at 0 instead of -inf. With a positive value in
# the row it is harmless; in a row of large negative values the maximum stays 0, every
# exp(x - 0) underflows to 0, and the row becomes 0 / 0 = nan.
import triton
import triton.language as tl

EXPECT_KIND = "nonfinite"
EXPECT_CASE = "all_negative_rows"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0

    # Mistake: 0 is not below every value.
    m = tl.zeros([B0], dtype=tl.float32)
    s = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        col_mask = cols < T
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :],
                       mask=row_mask[:, None] & col_mask[None, :], other=0.0)
        tile = tl.where(col_mask[None, :], tile, float("-inf"))
        m_new = tl.maximum(m, tl.max(tile, axis=1))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(tile - m_new[:, None]), axis=1)
        m = m_new

    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        offsets = rows[:, None] * T + cols[None, :]
        tile = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(z_ptr + offsets, tl.exp(tile - m[:, None]) / s[:, None], mask=mask)
