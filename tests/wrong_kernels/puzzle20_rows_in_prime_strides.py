# Layer norm whose programs walk the rows in strides of 41, `row = (pid * 41) % ROWS`, to spread
# neighbouring programs over memory; 41 is prime, so the walk was meant to visit every row once.
# It does while ROWS is not a multiple of 41, as in every small case (1 to 48 rows) and the
# 40-row ones. The case with 65,600 rows is 1,600 x 41: programs p and p + 1600 share a row, 41
# programs to each of 1,600 rows, and the other 64,000 rows are never written. Every program
# still stores exactly one whole row, and the five a sample runs (0, 1, 10256, 33936 and 65599)
# land on five different rows with the right values, so a sample sees nothing wrong; only
# running every program shows the rows that none of them stored.
import triton
import triton.language as tl

EXPECT_KIND = "unwritten"
EXPECT_CASE = "rows_past_65535"
EXPECT_SAYS = "832000 of 852800 elements of `y` were never written"


@triton.jit
def layer_norm_fwd(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, ROWS, D,
                   BLOCK_D: tl.constexpr, eps: tl.constexpr = 1e-5):
    row = (tl.program_id(0) * 41) % ROWS
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / D
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / D
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * D + cols, xc * rstd * w + b, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
