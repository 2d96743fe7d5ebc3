# Puzzle 5 applying the ReLU to y before the product: x * relu(y) is negative wherever
# x < 0 and y > 0, where relu(x * y) is 0.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "It looks like the ReLU applied to y before the product"


@triton.jit
def mul_relu_block_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.program_id(0) * B0 + tl.arange(0, B0)
    rows = tl.program_id(1) * B1 + tl.arange(0, B1)
    col_mask = cols < N0
    row_mask = rows < N1
    x = tl.load(x_ptr + cols, mask=col_mask)
    # Mistake: the ReLU of one factor, not of the product.
    y = tl.maximum(tl.load(y_ptr + rows, mask=row_mask), 0.0)
    z = x[None, :] * y[:, None]
    tl.store(z_ptr + rows[:, None] * N0 + cols[None, :], z,
             mask=row_mask[:, None] & col_mask[None, :])
