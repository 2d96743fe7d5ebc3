# Ignored rows skip their stores altogether: their loss and gradient are never written,
# where they must be 0.
import triton
import triton.language as tl

EXPECT_KIND = "unwritten"
EXPECT_CASE = "ignored_rows"


@triton.jit
def cross_entropy_kernel(x_ptr, target_ptr, dloss_ptr, loss_ptr, dx_ptr, N, V, B1: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * V
    dx_row = dx_ptr + row * V
    cols = tl.arange(0, B1)

    # Pass 1: the online logsumexp, a running maximum m and a running sum s of exp(x - m).
    m = float("-inf")
    s = 0.0
    for start in range(0, V, B1):
        mask = start + cols < V
        chunk = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(chunk, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(chunk - m_new), axis=0)
        m = m_new

    # The loss: lse - x[t] = (m - x[t]) + log(s). An ignored row (t = -100) reads nothing.
    t = tl.load(target_ptr + row)
    kept = t != -100
    x_t = tl.load(x_row + t, mask=kept, other=0.0).to(tl.float32)
    tl.store(loss_ptr + row, m - x_t + tl.log(s), mask=kept)

    # Pass 2: dx = g * (softmax - onehot), with g = 0 on an ignored row; the store rounds
    # to dx's dtype. The probabilities live only in registers.
    g = tl.where(kept, tl.load(dloss_ptr + row), 0.0)
    g_over_s = g / s
    for start in range(0, V, B1):
        mask = start + cols < V
        chunk = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        dx = tl.exp(chunk - m) * g_over_s - tl.where(start + cols == t, g, 0.0)
        tl.store(dx_row + start + cols, dx, mask=mask & (cols * 0 + t != -100))  # kept, lane by lane
