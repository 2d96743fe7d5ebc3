"""A serial chain of chunks of 256 (heuristic), each scanned by tl.associative_scan with the
learner's own add, and its carry added in: 32 dependent scan-and-carry steps per row instead of 8;
expect slower than the reference, by the chain."""
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.heuristics({"B1": lambda args: 256})
@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * T
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = cols < T
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        scanned = tl.associative_scan(x, 0, _add)
        tl.store(z_ptr + base + cols, scanned + carry, mask=mask)
        carry += tl.sum(x, axis=0)
