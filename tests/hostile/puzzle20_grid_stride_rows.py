# Correct: layer norm written as a persistent kernel, a grid-stride loop over the rows,
# `for row in tl.range(pid, ROWS, tl.num_programs(0))`, so the same kernel would serve a grid of
# one program per SM. Launched with the puzzle's grid of ROWS programs each program takes one
# row, the one the loop starts at: right at every size, 65,600 rows included.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.jit
def layer_norm_fwd(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, ROWS, D,
                   BLOCK_D: tl.constexpr, eps: tl.constexpr = 1e-5):
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    for row in tl.range(tl.program_id(0), ROWS, tl.num_programs(0)):
        x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / D
        xc = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / D + eps)
        tl.store(y_ptr + row * D + cols, xc * rstd * w + b, mask=mask)
        tl.store(mean_ptr + row, mean)
        tl.store(rstd_ptr + row, rstd)
