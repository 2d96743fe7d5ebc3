# Layer norm whose rstd is 1% too large in one row of every 97 past row 4095 (rows r >= 4096 with
# r % 97 == 13: a debugging tweak left in, to watch one class of rows in the backward). Rows 4184,
# 4281, ... of the case with 65,600 rows get a wrong rstd and a wrong y; every other row is exact.
# No small case has 4096 rows, and a sample of the big launch's programs (the first two, the last
# and two drawn at random: rows 0, 1, 10256, 33936 and 65599 with the course's seeds) never lands
# in that class, so only running every program of rows_past_65535 catches it.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "rows_past_65535"
EXPECT_SAYS = "(4184, 0): yours"


@triton.jit
def layer_norm_fwd(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, ROWS, D,
                   BLOCK_D: tl.constexpr, eps: tl.constexpr = 1e-5):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / D
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / D
    rstd = 1.0 / tl.sqrt(var + eps)
    # The tweak: one residue class of the rows past 4095.
    rstd = tl.where((row >= 4096) & (row % 97 == 13), rstd * 1.01, rstd)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * D + cols, xc * rstd * w + b, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
