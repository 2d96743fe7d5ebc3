import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * T
    z_row = z_ptr + row * T
    cols = tl.arange(0, B1)

    # Pass 1: the running maximum m and the running sum s of exp(x - m), in fp32.
    m = float("-inf")
    s = 0.0
    for start in range(0, T, B1):
        mask = start + cols < T
        # Padding lanes as -inf: never the maximum, and exp(-inf - m) adds exactly 0.
        # evict_last: keep the row in L2, where pass 2 will read it again.
        chunk = tl.load(x_row + start + cols, mask=mask, other=float("-inf"),
                        eviction_policy="evict_last").to(tl.float32)
        m_new = tl.maximum(m, tl.max(chunk, axis=0))
        # The terms already in s were taken against the old maximum: rescale them.
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(chunk - m_new), axis=0)
        m = m_new

    # Pass 2: normalise chunk by chunk; the store rounds to z's dtype. This is the row's
    # last read, so its lines may leave L2 first.
    inv = 1.0 / s
    for start in range(0, T, B1):
        mask = start + cols < T
        chunk = tl.load(x_row + start + cols, mask=mask, other=float("-inf"),
                        eviction_policy="evict_first").to(tl.float32)
        tl.store(z_row + start + cols, tl.exp(chunk - m) * inv, mask=mask)
