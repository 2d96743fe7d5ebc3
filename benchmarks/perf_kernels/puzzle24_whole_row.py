"""The whole row in one block (a heuristic sets B1 to the next power of two of T): one tl.cumsum
over 8192 elements, no carry and no loop, 64 elements a thread at 4 warps; expect about the
reference's time, or a little slower for the registers."""
import triton
import triton.language as tl


@triton.heuristics({"B1": lambda args: triton.next_power_of_2(args["T"])})
@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * T
    cols = tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(z_ptr + base + cols, tl.cumsum(x, axis=0), mask=mask)
