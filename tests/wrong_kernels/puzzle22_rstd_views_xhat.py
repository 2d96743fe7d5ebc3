# The forward stores x-hat beside rstd, in one (rows, D + 1) buffer, and saves rstd as the view of
# its last column: a tensor of shape (rows,), as the puzzle lets ctx keep, whose storage holds all
# of x-hat, which the backward's kernel reads back through rstd's pointer. Shapes say nothing:
# the storage kept alive does.
import torch
import triton
import triton.language as tl

EXPECT_KIND = "saved"
EXPECT_SAYS = ("ctx saved a tensor of shape (48,) float32 that keeps alive a storage of 18,624 bytes (made by "
               "`empty` at line 60: `buf = torch.empty((n, d + 1), dtype=torch.float32, device=x.device)`), "
               "where the tensor itself takes 192 bytes")

EPS = 1e-6


@triton.jit
def rms_norm_fwd(x_ptr, w_ptr, y_ptr, buf_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(y_ptr + row * D + cols, x * rstd * w, mask=mask)
    tl.store(buf_ptr + row * (D + 1) + cols, x * rstd, mask=mask)  # x-hat, kept
    tl.store(buf_ptr + row * (D + 1) + D, rstd)


@triton.jit
def rms_norm_bwd(rstd_ptr, w_ptr, grad_y_ptr, grad_x_ptr, partial_grad_w_ptr, ROWS, D, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_D], dtype=tl.float32)
    for row in range(0, ROWS):
        rstd = tl.load(rstd_ptr + row * (D + 1))
        xhat = tl.load(rstd_ptr - D + row * (D + 1) + cols, mask=mask, other=0.0)  # read back, not recomputed
        g = tl.load(grad_y_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
        wg = w * g
        c = tl.sum(wg * xhat, axis=0) / D
        tl.store(grad_x_ptr + row * D + cols, rstd * (wg - xhat * c), mask=mask)
        dw += g * xhat
    tl.store(partial_grad_w_ptr + pid * D + cols, dw, mask=mask)


def _warps(block: int) -> int:
    return max(1, min(16, block // 256))


class RMSNormFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        d = x.shape[-1]
        rows = x.reshape(-1, d).contiguous()
        n = rows.shape[0]
        block = triton.next_power_of_2(d)
        y = torch.empty_like(rows)
        buf = torch.empty((n, d + 1), dtype=torch.float32, device=x.device)
        rms_norm_fwd[(n,)](rows, w, y, buf, d, EPS, BLOCK_D=block, num_warps=_warps(block))
        rstd = buf[:, d]
        ctx.save_for_backward(w, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        w, rstd = ctx.saved_tensors
        d = w.shape[0]
        grad_rows = grad_output.reshape(-1, d).contiguous()
        n = grad_rows.shape[0]
        block = triton.next_power_of_2(d)
        grad_x = torch.empty((n, d), dtype=grad_output.dtype, device=grad_output.device)
        partial = torch.empty((1, d), dtype=torch.float32, device=grad_output.device)
        rms_norm_bwd[(1,)](rstd, w, grad_rows, grad_x, partial, n, d, BLOCK_D=block, num_warps=_warps(block))
        return grad_x.view(grad_output.shape), partial.sum(0).to(w.dtype)
