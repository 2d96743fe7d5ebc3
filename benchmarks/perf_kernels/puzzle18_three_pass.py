"""Three passes over each row in chunks of 1024 (maximum, sum of exponentials, write): x is read
three times instead of once, the re-reads partly from L2; expect roughly 1.5-2x the fused kernel."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr, CHUNK: tl.constexpr = 1024):
    row = tl.program_id(0)
    x_row = x_ptr + row * T
    z_row = z_ptr + row * T
    cols = tl.arange(0, CHUNK)

    # Pass 1: the row's maximum, kept lane by lane and reduced once at the end.
    m = tl.full([CHUNK], float("-inf"), tl.float32)
    for start in range(0, T, CHUNK):
        x = tl.load(x_row + start + cols, mask=start + cols < T, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, x)
    m_row = tl.max(m, axis=0)

    # Pass 2: the denominator.
    s = tl.zeros([CHUNK], tl.float32)
    for start in range(0, T, CHUNK):
        x = tl.load(x_row + start + cols, mask=start + cols < T, other=float("-inf")).to(tl.float32)
        s += tl.exp(x - m_row)
    inv = 1.0 / tl.sum(s, axis=0)

    # Pass 3: the output.
    for start in range(0, T, CHUNK):
        mask = start + cols < T
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(z_row + start + cols, tl.exp(x - m_row) * inv, mask=mask)
