"""Three passes over each row (maximum, sum, write) instead of the online softmax's two: one more
read of x, from L2 where the evict_last hint kept it; expect ~1.2-1.5x the reference."""
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * T
    z_row = z_ptr + row * T
    cols = tl.arange(0, B1)

    m = tl.full([B1], float("-inf"), tl.float32)
    for start in range(0, T, B1):
        x = tl.load(x_row + start + cols, mask=start + cols < T, other=float("-inf"),
                    eviction_policy="evict_last").to(tl.float32)
        m = tl.maximum(m, x)
    m_row = tl.max(m, axis=0)

    s = tl.zeros([B1], tl.float32)
    for start in range(0, T, B1):
        x = tl.load(x_row + start + cols, mask=start + cols < T, other=float("-inf"),
                    eviction_policy="evict_last").to(tl.float32)
        s += tl.exp(x - m_row)
    inv = 1.0 / tl.sum(s, axis=0)

    for start in range(0, T, B1):
        mask = start + cols < T
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"),
                    eviction_policy="evict_first").to(tl.float32)
        tl.store(z_row + start + cols, tl.exp(x - m_row) * inv, mask=mask)
