# The variance taken in one pass as E[x^2] - E[x]^2. Equal on paper, but in float32 two large,
# nearly equal numbers are subtracted: on rows whose mean is 256 times their spread, most of
# the variance's bits are lost, and rstd is wrong by about a percent.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "large_mean"
EXPECT_SAYS = "E[x²] − E[x]²"


@triton.jit
def layer_norm_fwd(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, ROWS, D,
                   BLOCK_D: tl.constexpr, eps: tl.constexpr = 1e-5):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / D
    var = tl.sum(x * x, axis=0) / D - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * D + cols, (x - mean) * rstd * w + b, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
