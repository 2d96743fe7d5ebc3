# Correct: the RMS norm of the solutions, but its kernel converts the float argument `eps` with
# `eps.to(tl.float32)`, as kernel libraries do. A float argument reaches a compiled kernel as an fp32
# scalar, which has `.to`; the interpreter must run it so too (it used to raise AttributeError).
import torch
import triton
import triton.language as tl

EXPECT_STATUS = "pass"

EPS = 1e-6


@triton.jit
def rms_norm_fwd(x_ptr, w_ptr, y_ptr, rstd_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    # Padding lanes are 0 and add nothing to the sum of squares; eps inside the root.
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps.to(tl.float32))
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
        # x-hat recomputed here from x and the saved rstd, never stored.
        xhat = x * rstd
        wg = w * g
        c = tl.sum(wg * xhat, axis=0) / D
        tl.store(grad_x_ptr + row * D + cols, rstd * (wg - xhat * c), mask=mask)
        dw += g * xhat
    tl.store(partial_grad_w_ptr + pid * D + cols, dw, mask=mask)


def _warps(block: int) -> int:
    # Enough threads for a wide row, at most 16 elements of it per thread and vector.
    return max(1, min(16, block // 256))


SMS = 132  # an H100's SMs


def _programs_for(rows: int, device: torch.device) -> int:
    # One program per SM: enough to fill the GPU, few partial rows for the host to sum. (Four
    # programs, as this file once had, loop over 16,400 rows each at 65,600 rows: serial work the
    # interpreter cannot batch, which took 18 of the 20 s this entry is graded with.)
    return min(rows, SMS)


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
        per_program = triton.cdiv(n, _programs_for(n, x.device))
        programs = triton.cdiv(n, per_program)
        grad_x = torch.empty_like(rows)
        partial = torch.empty((programs, d), dtype=torch.float32, device=x.device)
        rms_norm_bwd[(programs,)](rows, w, grad_rows, rstd, grad_x, partial, n, d, per_program,
                                  BLOCK_D=block, num_warps=_warps(block))
        # Stage two: the programs' partial rows, added on the host.
        return grad_x.view(x.shape), partial.sum(0).to(w.dtype)
