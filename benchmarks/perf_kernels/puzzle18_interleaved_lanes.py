"""The row read in an interleaved order: lane i takes column (i % 8) * (B1 // 8) + i // 8, so
neighbouring lanes are B1 // 8 columns apart (a permutation of the row: the max, the sum and
the store agree). No axis of the block is contiguous, so nothing is vectorised, and each warp
touches 8 sectors for 64 useful bytes; L1 keeps most sectors for the lanes that need them
next. Expect slower than the reference, by less than the sectors say."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    lane = tl.arange(0, B1)
    cols = (lane % 8) * (B1 // 8) + lane // 8
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(z_ptr + row * T + cols, e / tl.sum(e, axis=0), mask=mask)
