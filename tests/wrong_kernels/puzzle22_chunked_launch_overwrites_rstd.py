# RMS norm whose forward launches in chunks of at most 65,535 rows, one launch per chunk, in the
# belief that a grid axis holds no more programs (axis 0 holds 2**31 - 1; only axes 1 and 2 stop
# at 65,535). Each chunk gets its slice of x and of y, but rstd is passed whole, not sliced: the
# second chunk's programs store their rstd over rows 0 to 64 of the first chunk's, and rows
# 65,535 on keep the zeros rstd was made with. y is right everywhere (each program uses the rstd
# it computed); the backward reads the saved rstd, so grad_x is wrong in rows 0 to 64 (another
# row's rstd) and 65,535 to 65,599 (zero), and grad_w with them. Only a launch split into
# several chunks shows it: the case of 65,600 rows, which the interpreter records and checks
# against the GPU's limits but has never run.
import torch
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "rows_past_65535"
EXPECT_SAYS = "`grad_x`"

EPS = 1e-6
CHUNK = 65535  # programs per launch


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
        rstd = torch.zeros(n, dtype=torch.float32, device=x.device)
        for start in range(0, n, CHUNK):
            count = min(CHUNK, n - start)
            # The slices of x and y start at this chunk's first row; rstd's does not.
            rms_norm_fwd[(count,)](rows[start:start + count], w, y[start:start + count], rstd, d, EPS,
                                   BLOCK_D=block, num_warps=_warps(block))
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
        per_program = triton.cdiv(n, min(n, 132))
        programs = triton.cdiv(n, per_program)
        grad_x = torch.empty_like(rows)
        partial = torch.empty((programs, d), dtype=torch.float32, device=x.device)
        rms_norm_bwd[(programs,)](rows, w, grad_rows, rstd, grad_x, partial, n, d, per_program,
                                  BLOCK_D=block, num_warps=_warps(block))
        return grad_x.view(x.shape), partial.sum(0).to(w.dtype)
