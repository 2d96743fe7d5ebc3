"""The reference chunked scan with chunks of 64 instead of the bench's 1024 (a heuristic overrides B1):
128 dependent steps per row of 8192, each a tiny scan and a reduction on 4 warps (half the lanes
idle); expect several times slower."""
import triton
import triton.language as tl


@triton.heuristics({"B1": lambda args: 64})
@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * T
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = cols < T
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(z_ptr + base + cols, tl.cumsum(x, axis=0) + carry, mask=mask)
        carry += tl.sum(x, axis=0)
