# Correct: one Philox draw per element, its first word kept (tl.rand on the flat index), as the Triton
# tutorial's dropout draws. Another stream than the statement's, and four times the draws: a note
# beside the pass, never a fail.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"
EXPECT_SAYS = "Note: your output looks like one Philox draw per element"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    cols = block * B1 + tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.rand(SEED, row * T + cols)
    p = P_PERCENT / 100
    tl.store(z_ptr + row * T + cols, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
