# Puzzle 4 taking the rows from program_id(0) and the columns from program_id(1). In the
# classic case the grid is (cdiv(100, 32), cdiv(90, 32)) = (4, 3): program ids 0..2 on
# axis 1 then reach columns 0..95 only, so columns 96..99 are never stored. Everything
# that is stored is right (masks keep it in bounds), hence "unwritten".
import triton
import triton.language as tl

EXPECT_KIND = "unwritten"
EXPECT_CASE = "classic"


@triton.jit
def add_vec_block_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.program_id(1) * B0 + tl.arange(0, B0)
    rows = tl.program_id(0) * B1 + tl.arange(0, B1)
    col_mask = cols < N0
    row_mask = rows < N1
    x = tl.load(x_ptr + cols, mask=col_mask)
    y = tl.load(y_ptr + rows, mask=row_mask)
    z = x[None, :] + y[:, None]
    tl.store(z_ptr + rows[:, None] * N0 + cols[None, :], z,
             mask=row_mask[:, None] & col_mask[None, :])
