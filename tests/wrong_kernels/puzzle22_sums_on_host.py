# Kernels that only multiply; every sum, of a row's squares, of a row's w * g * x-hat and of
# grad_w over the rows, done by `.sum` on a kernel's buffer. The values are right, and the
# reductions, the puzzle's work, are PyTorch's. The statement leaves the host one reduction:
# grad_w's final sum of per-program partial rows, in the backward.
import torch
import triton
import triton.language as tl

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = ("the forward reduced a kernel's buffer of shape (48, 96) with PyTorch: `aten.sum` (line 71: "
               "`sums = squares.sum(1)`) sums in the forward. The statement leaves the host one reduction, in the "
               "backward: `grad_w` as `partial.sum(0)`")

EPS = 1e-6


@triton.jit
def square_kernel(x_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * D + cols, x * x, mask=mask)


@triton.jit
def scale_kernel(x_ptr, w_ptr, sums_ptr, y_ptr, rstd_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.load(sums_ptr + row) / D + eps)
    tl.store(y_ptr + row * D + cols, x * rstd * w, mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def products_kernel(x_ptr, w_ptr, g_ptr, rstd_ptr, wgx_ptr, gx_ptr, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    xhat = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32) * tl.load(rstd_ptr + row)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(wgx_ptr + row * D + cols, w * g * xhat, mask=mask)
    tl.store(gx_ptr + row * D + cols, g * xhat, mask=mask)


@triton.jit
def grad_x_kernel(x_ptr, w_ptr, g_ptr, rstd_ptr, c_ptr, grad_x_ptr, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32) * rstd
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    c = tl.load(c_ptr + row) / D
    tl.store(grad_x_ptr + row * D + cols, rstd * (w * g - xhat * c), mask=mask)


class RMSNormFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        d = x.shape[-1]
        rows = x.reshape(-1, d).contiguous()
        n, block = rows.shape[0], triton.next_power_of_2(d)
        squares = torch.empty((n, d), dtype=torch.float32, device=x.device)
        square_kernel[(n,)](rows, squares, d, BLOCK_D=block)
        sums = squares.sum(1)
        y = torch.empty_like(rows)
        rstd = torch.empty(n, dtype=torch.float32, device=x.device)
        scale_kernel[(n,)](rows, w, sums, y, rstd, d, EPS, BLOCK_D=block)
        ctx.save_for_backward(x, w, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        x, w, rstd = ctx.saved_tensors
        d = x.shape[-1]
        rows = x.reshape(-1, d).contiguous()
        g = grad_output.reshape(-1, d).contiguous()
        n, block = rows.shape[0], triton.next_power_of_2(d)
        wgx = torch.empty((n, d), dtype=torch.float32, device=x.device)
        gx = torch.empty((n, d), dtype=torch.float32, device=x.device)
        products_kernel[(n,)](rows, w, g, rstd, wgx, gx, d, BLOCK_D=block)
        c = wgx.sum(1)
        grad_x = torch.empty_like(rows)
        grad_x_kernel[(n,)](rows, w, g, rstd, c, grad_x, d, BLOCK_D=block)
        return grad_x.view(x.shape), gx.sum(0).to(w.dtype)
