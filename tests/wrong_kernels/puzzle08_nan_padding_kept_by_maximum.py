# Online softmax that pads the columns past T with NaN and drops them from the sum with
# `tl.maximum(p, 0.0) >= 0.0`, counting on maximum(nan, 0) being nan (numpy's meaning). On a
# GPU tl.maximum ignores the NaN operand, the test is true, the NaN padding enters the sum and
# every row with a partial last chunk is NaN. The interpreter must give the GPU's verdict.
import triton
import triton.language as tl

EXPECT_KIND = "nonfinite"
EXPECT_SAYS = "NaN"


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
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=float("nan"))
        m_new = tl.maximum(m, tl.max(tile, axis=1))  # tl.max skips NaN, on a GPU and here
        p = tl.exp(tile - m_new[:, None])
        p = tl.where(tl.maximum(p, 0.0) >= 0.0, p, 0.0)  # Mistake: keeps NaN on a GPU
        s = s * tl.exp(m - m_new) + tl.sum(p, axis=1)
        m = m_new
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        offsets = rows[:, None] * T + cols[None, :]
        tile = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(z_ptr + offsets, tl.exp(tile - m[:, None]) / s[:, None], mask=mask)
