# RMS norm whose backward gives every program three rows, whatever the number of rows, and
# leaves the host to sum one partial row of grad_w per program. The statement lets the host sum
# at most 1,024 partial rows (a program sums several rows itself when there are more). Within
# that in every case the interpreter runs: 344 partial rows for 1,030 rows, 3 for 7. At 65,600
# rows there are 21,867, twenty times the allowance: on a GPU the recorded program fails as PyTorch
# doing the kernel's reduction; on the CPU that case is recorded and its launches checked, but its
# program is read only after a replay, which it never gets, so today nothing reads the sum.
import torch
import triton
import triton.language as tl

EXPECT_KIND = "torch_compute"
EXPECT_CASE = "rows_past_65535"
EXPECT_SAYS = "sums 21867 rows, more than the 1024 per-program partial rows"

EPS = 1e-6
ROWS_PER_PROGRAM = 3


@triton.jit
def rms_norm_fwd(x_ptr, w_ptr, y_ptr, rstd_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(y_ptr + row * D + cols, x * rstd * w, mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rms_norm_bwd(x_ptr, w_ptr, grad_y_ptr, rstd_ptr, grad_x_ptr, partial_grad_w_ptr,
                 ROWS, D, ROWS_PER_PROGRAM, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_D], dtype=tl.float32)
    first = pid * ROWS_PER_PROGRAM
    for row in range(first, tl.minimum(first + ROWS_PER_PROGRAM, ROWS)):
        x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
        g = tl.load(grad_y_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        xhat = x * rstd
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
        programs = triton.cdiv(n, ROWS_PER_PROGRAM)
        grad_x = torch.empty_like(rows)
        partial = torch.empty((programs, d), dtype=torch.float32, device=x.device)
        rms_norm_bwd[(programs,)](rows, w, grad_rows, rstd, grad_x, partial, n, d, ROWS_PER_PROGRAM,
                                  BLOCK_D=block, num_warps=_warps(block))
        return grad_x.view(x.shape), partial.sum(0).to(w.dtype)
