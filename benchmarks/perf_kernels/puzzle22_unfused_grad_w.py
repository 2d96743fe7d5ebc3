"""An unfused backward: one kernel writes grad_x row by row, a second sums grad_w column block by
column block, reading x and grad_y from memory again (and with only D / 64 = 128 programs at the
headline); expect the step ~1.3-1.6x the reference's."""
import torch
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def rms_norm_fwd(x_ptr, w_ptr, y_ptr, rstd_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    # Padding lanes are 0 and add nothing to the sum of squares; eps inside the root.
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(y_ptr + row * D + cols, x * rstd * w, mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rms_norm_bwd(x_ptr, w_ptr, grad_y_ptr, rstd_ptr, grad_x_ptr, D, BLOCK_D: tl.constexpr):
    # grad_x only, one program per row.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(grad_y_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.load(rstd_ptr + row)
    xhat = x * rstd
    wg = w * g
    c = tl.sum(wg * xhat, axis=0) / D
    tl.store(grad_x_ptr + row * D + cols, rstd * (wg - xhat * c), mask=mask)


@triton.jit
def rms_norm_dw(x_ptr, grad_y_ptr, rstd_ptr, grad_w_ptr, ROWS, D, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # grad_w of BLOCK_C columns, summed down every row: x and grad_y are read a second time.
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < D
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for start in range(0, ROWS, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        row_ok = rows < ROWS
        tile = rows[:, None] * D + cols[None, :]
        ok = row_ok[:, None] & col_ok[None, :]
        x = tl.load(x_ptr + tile, mask=ok, other=0.0).to(tl.float32)
        g = tl.load(grad_y_ptr + tile, mask=ok, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + rows, mask=row_ok, other=0.0)
        acc += g * x * rstd[:, None]
    tl.store(grad_w_ptr + cols, tl.sum(acc, axis=0), mask=col_ok)


def _warps(block: int) -> int:
    # Enough threads for a wide row, at most 16 elements of it per thread and vector.
    return max(1, min(16, block // 256))


class RMSNormFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        d = x.shape[-1]
        rows = x.reshape(-1, d).contiguous()
        n = rows.shape[0]
        block = triton.next_power_of_2(d)
        y = torch.empty_like(rows)
        rstd = torch.empty(n, dtype=torch.float32, device=x.device)
        rms_norm_fwd[(n,)](rows, w, y, rstd, d, EPS, BLOCK_D=block, num_warps=_warps(block))
        ctx.save_for_backward(x, w, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        x, w, rstd = ctx.saved_tensors
        d = x.shape[-1]
        rows = x.reshape(-1, d).contiguous()
        grad_rows = grad_output.reshape(-1, d).contiguous()
        n = rows.shape[0]
        block = triton.next_power_of_2(d)
        grad_x = torch.empty_like(rows)
        rms_norm_bwd[(n,)](rows, w, grad_rows, rstd, grad_x, d, BLOCK_D=block, num_warps=_warps(block))
        grad_w = torch.empty(d, dtype=torch.float32, device=x.device)
        rms_norm_dw[(triton.cdiv(d, 64),)](rows, grad_rows, rstd, grad_w, n, d, BLOCK_R=64, BLOCK_C=64, num_warps=4)
        return grad_x.view(x.shape), grad_w.to(w.dtype)
