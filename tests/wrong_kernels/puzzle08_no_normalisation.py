# Puzzle 8 finding each row's maximum and sum correctly but storing exp(x - max) without
# dividing by the sum: every row's values add up to more than 1.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "It looks like exp(x - max) without the division"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    m = tl.full([B0], float("-inf"), tl.float32)
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
        # Mistake: no `/ s[:, None]`.
        tl.store(z_ptr + offsets, tl.exp(tile - m[:, None]), mask=mask)
