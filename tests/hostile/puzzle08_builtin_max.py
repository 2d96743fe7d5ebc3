# Correct: Python's builtin max on blocks, which compiled Triton reads as elementwise
# tl.maximum. The interpreter must give it the same meaning.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    m = tl.full([B0], float("-inf"), tl.float32)
    s = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=float("-inf"))
        m_new = max(m, tl.max(tile, axis=1))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(tile - m_new[:, None]), axis=1)
        m = m_new
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        offsets = rows[:, None] * T + cols[None, :]
        tile = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(z_ptr + offsets, tl.exp(tile - m[:, None]) / s[:, None], mask=mask)
