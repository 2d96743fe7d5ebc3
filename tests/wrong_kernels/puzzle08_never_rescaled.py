# Puzzle 8's online softmax that never rescales its running sum: when a later chunk raises the
# maximum from m to m_new, the terms already summed stay exp(x - m) instead of exp(x - m_new). Right
# whenever a row's maximum is in its first chunk; wrong otherwise. Puzzles 19 and 38 named it, 8 did
# not (issue 34).
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "It looks like an online sum never rescaled when the maximum grows"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0

    # Pass 1: running maximum and running sum of exp(x - max) (online softmax).
    m = tl.full([B0], float("-inf"), tl.float32)
    s = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        col_mask = cols < T
        # Rows past N0 load as 0 (never stored); columns past T as -inf (they add exp(-inf) = 0).
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :],
                       mask=row_mask[:, None] & col_mask[None, :], other=0.0)
        tile = tl.where(col_mask[None, :], tile, float("-inf"))
        m_new = tl.maximum(m, tl.max(tile, axis=1))
        s = s + tl.sum(tl.exp(tile - m_new[:, None]), axis=1)  # the mistake: s is not rescaled by exp(m - m_new)
        m = m_new

    # Pass 2: normalise and store.
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        offsets = rows[:, None] * T + cols[None, :]
        tile = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(z_ptr + offsets, tl.exp(tile - m[:, None]) / s[:, None], mask=mask)
