# Puzzle 6 with the ReLU's gate written `>=`: where x * y is exactly 0 the gradient passes
# through as dz * y, but relu'(0) is 0 (torch's relu passes gradient only where its input > 0).
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "exact_zeros"


@triton.jit
def mul_relu_block_back_kernel(x_ptr, y_ptr, dz_ptr, dx_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.program_id(0) * B0 + tl.arange(0, B0)
    rows = tl.program_id(1) * B1 + tl.arange(0, B1)
    row_mask = rows < N1
    mask = row_mask[:, None] & (cols < N0)[None, :]
    offsets = rows[:, None] * N0 + cols[None, :]
    x = tl.load(x_ptr + offsets, mask=mask)
    dz = tl.load(dz_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + rows, mask=row_mask)[:, None]
    # Mistake: >= lets the gradient through at x * y == 0.
    dx = tl.where(x * y >= 0, dz * y, 0.0)
    tl.store(dx_ptr + offsets, dx, mask=mask)
