"""An online softmax in chunks of 1024, as if the row could not fit one block: the maximum and the
sum in one pass, the output in a second, so x is read twice (no eviction hints); expect ~1.2-1.5x."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr, CHUNK: tl.constexpr = 1024):
    row = tl.program_id(0)
    x_row = x_ptr + row * T
    z_row = z_ptr + row * T
    cols = tl.arange(0, CHUNK)

    m = float("-inf")
    s = 0.0
    for start in range(0, T, CHUNK):
        x = tl.load(x_row + start + cols, mask=start + cols < T, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new

    inv = 1.0 / s
    for start in range(0, T, CHUNK):
        mask = start + cols < T
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(z_row + start + cols, tl.exp(x - m) * inv, mask=mask)
