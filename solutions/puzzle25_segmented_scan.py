import triton
import triton.language as tl


@triton.jit
def segment_combine(a_value, a_start, b_value, b_start):
    # (a then b): b's segment starts inside b, so a is cut off; otherwise b adds onto a.
    value = tl.where(b_start != 0, b_value, a_value + b_value)
    return value, a_start | b_start


@triton.jit
def segscan_kernel(x_ptr, f_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * T
    lanes = tl.arange(0, B1)
    # The running sum of the segment still open at the end of the chunks before this one.
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + lanes
        mask = cols < T
        # Padding lanes: value 0 and no start, so they neither add nor cut.
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        starts = tl.load(f_ptr + base + cols, mask=mask, other=0) & 1
        value, seen = tl.associative_scan((x, starts), 0, segment_combine)
        # Until the chunk's first segment start, the open segment from before goes on.
        z = tl.where(seen != 0, value, value + carry)
        tl.store(z_ptr + base + cols, z, mask=mask)
        # The segment open at the chunk's end is its last lane's result.
        carry = tl.sum(tl.where(lanes == B1 - 1, z, 0.0), axis=0)
