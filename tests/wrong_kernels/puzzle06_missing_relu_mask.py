# Puzzle 6 without the ReLU's gate: dx = dz * y everywhere, also where x * y <= 0 and the
# true gradient is 0.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"


@triton.jit
def mul_relu_block_back_kernel(x_ptr, y_ptr, dz_ptr, dx_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.program_id(0) * B0 + tl.arange(0, B0)
    rows = tl.program_id(1) * B1 + tl.arange(0, B1)
    row_mask = rows < N1
    mask = row_mask[:, None] & (cols < N0)[None, :]
    offsets = rows[:, None] * N0 + cols[None, :]
    dz = tl.load(dz_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + rows, mask=row_mask)[:, None]
    tl.store(dx_ptr + offsets, dz * y, mask=mask)
