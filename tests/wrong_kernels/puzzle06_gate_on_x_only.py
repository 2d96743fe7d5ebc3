# Puzzle 6 gating the gradient on the sign of x alone, as if the forward were relu(x) * y:
# wherever y < 0 the gate is the wrong way round.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "It looks like the gate taken from x alone"


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
    # Mistake: the ReLU's input was x * y, not x.
    dx = tl.where(x > 0, dz * y, 0.0)
    tl.store(dx_ptr + offsets, dx, mask=mask)
