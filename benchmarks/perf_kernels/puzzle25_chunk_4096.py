"""The reference segmented scan with chunks of 4096 instead of the bench's 1024 (a heuristic overrides
B1): fewer loop steps, 32 (value, flag) pairs a thread; expect about the reference's time."""
import triton
import triton.language as tl


@triton.jit
def segment_combine(a_value, a_start, b_value, b_start):
    value = tl.where(b_start != 0, b_value, a_value + b_value)
    return value, a_start | b_start


@triton.heuristics({"B1": lambda args: 4096})
@triton.jit
def segscan_kernel(x_ptr, f_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * T
    lanes = tl.arange(0, B1)
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + lanes
        mask = cols < T
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        starts = tl.load(f_ptr + base + cols, mask=mask, other=0) & 1
        value, seen = tl.associative_scan((x, starts), 0, segment_combine)
        # The open segment's sum continues only up to the chunk's first start.
        z = tl.where(seen != 0, value, value + carry)
        tl.store(z_ptr + base + cols, z, mask=mask)
        carry = tl.sum(tl.where(lanes == B1 - 1, z, 0.0), axis=0)
