# Three-pass softmax whose first pass reads only the first B1 columns of each row: the
# "maximum" it subtracts is the first chunk's. Exact in real arithmetic, and random rows
# rarely put a much larger value later; when a later value exceeds it by more than about
# 88, exp overflows to inf and the row becomes nan.
import triton
import triton.language as tl

EXPECT_KIND = "nonfinite"
EXPECT_CASE = "max_in_last_chunk"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0

    # Mistake: the maximum of the first chunk only.
    cols = tl.arange(0, B1)
    first = tl.load(x_ptr + rows[:, None] * T + cols[None, :],
                    mask=row_mask[:, None] & (cols < T)[None, :], other=float("-inf"))
    m = tl.max(first, axis=1)
    m = tl.where(row_mask, m, 0.0)

    s = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=float("-inf"))
        s += tl.sum(tl.exp(tile - m[:, None]), axis=1)

    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        offsets = rows[:, None] * T + cols[None, :]
        tile = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(z_ptr + offsets, tl.exp(tile - m[:, None]) / s[:, None], mask=mask)
