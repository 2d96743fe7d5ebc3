# dw reduced over the wrong axis: each row's dy * xhat summed along the row, over its columns
# (tl.sum(..., axis=0) of a row vector), instead of added column by column down the rows. Every
# entry of dw then holds the same number.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "dw summed along each row"


@triton.jit
def layer_norm_bwd(x_ptr, w_ptr, dy_ptr, mean_ptr, rstd_ptr, dx_ptr, partial_dw_ptr, partial_db_ptr,
                   ROWS, D, BLOCK_D: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_D], dtype=tl.float32)
    db = tl.zeros([BLOCK_D], dtype=tl.float32)
    first = pid * ROWS_PER_PROGRAM
    for row in range(first, tl.minimum(first + ROWS_PER_PROGRAM, ROWS)):
        x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, axis=0) / D
        c2 = tl.sum(wdy, axis=0) / D
        tl.store(dx_ptr + row * D + cols, (wdy - (xhat * c1 + c2)) * rstd, mask=mask)
        dw += tl.sum(dy * xhat, axis=0)
        db += dy
    tl.store(partial_dw_ptr + pid * D + cols, dw, mask=mask)
    tl.store(partial_db_ptr + pid * D + cols, db, mask=mask)
