# Accumulates in the output itself, starting from what it held where that is a number: the
# grader's NaN fill reads as "nothing yet", a GPU's stale memory as a sum already begun.
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "mismatch"
EXPECT_SAYS = "you read `z` before storing to it"


@triton.jit
def sum_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    acc = tl.load(z_ptr + rows, mask=row_mask)
    acc = tl.where(acc == acc, acc, 0.0)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols < T)[None, :]
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0), axis=1)
    tl.store(z_ptr + rows, acc, mask=row_mask)
