"""A sequential scan, one element at a time: each step loads one value, adds it to the running
sum and stores it, so a row of 8192 is 8192 dependent scalar steps on one thread of the program;
latency-bound, expect one to two orders of magnitude slower than the reference."""
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * T
    running = tl.zeros((), dtype=tl.float32)
    for j in range(0, T):
        running += tl.load(x_ptr + base + j).to(tl.float32)
        tl.store(z_ptr + base + j, running)
