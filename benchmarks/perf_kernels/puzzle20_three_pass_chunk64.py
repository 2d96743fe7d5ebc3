"""puzzle20_three_pass_chunks with chunks of 64 instead of 1024: three passes of 128 tiny steps per
row of 8192 on 8 warps (a quarter of the lanes busy); expect much slower than the 1024 version."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_fwd(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, ROWS, D,
                   BLOCK_D: tl.constexpr, eps: tl.constexpr = 1e-5, CHUNK: tl.constexpr = 64):
    row = tl.program_id(0)
    x_row = x_ptr + row * D
    y_row = y_ptr + row * D
    cols = tl.arange(0, CHUNK)

    total = tl.zeros([CHUNK], tl.float32)
    for start in range(0, D, CHUNK):
        total += tl.load(x_row + start + cols, mask=start + cols < D, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / D

    # Centred before squaring, the padding lanes switched off.
    squares = tl.zeros([CHUNK], tl.float32)
    for start in range(0, D, CHUNK):
        mask = start + cols < D
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        xc = tl.where(mask, x - mean, 0.0)
        squares += xc * xc
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / D + eps)

    for start in range(0, D, CHUNK):
        mask = start + cols < D
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + start + cols, (x - mean) * rstd * w + b, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
