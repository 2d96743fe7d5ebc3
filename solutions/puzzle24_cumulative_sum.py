import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * T  # rows of large matrices pass 2**31 elements
    # The sum of every chunk before the current one, in fp32.
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = cols < T
        # Lanes past the row load as 0: they change neither the scan of the real lanes nor the carry.
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(z_ptr + base + cols, tl.cumsum(x, axis=0) + carry, mask=mask)
        carry += tl.sum(x, axis=0)
