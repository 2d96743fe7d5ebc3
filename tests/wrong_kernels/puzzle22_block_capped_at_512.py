# Puzzle 22 with its block capped at 512 columns, as a kernel tuned for small widths might
# cap it to keep registers down: one block covers the row while D <= 512, as in the cases of
# 300 columns and fewer; at a model's width (thousands of columns) the sums miss most of the
# row and the columns past 512 are never stored.
import torch
import triton
import triton.language as tl

EPS = 1e-6

EXPECT_KIND = "mismatch"
EXPECT_CASE = "model_width"
EXPECT_SAYS = "model_width"



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


H100_SMS = 132  # off a GPU (the interpreter, --perf): the grid an H100 would run


def _programs_for(rows: int, device: torch.device) -> int:
    # One program per SM of an H100, on every device: a wrapper that asks which device it is on
    # is refused (the solution does the same).
    return min(rows, H100_SMS)


class RMSNormFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        d = x.shape[-1]
        rows = x.reshape(-1, d).contiguous()
        n = rows.shape[0]
        block = min(triton.next_power_of_2(d), 512)
        # zeros: the columns past 512, never stored, stay 0 on every device (empty memory's leftovers
        # would make this a mismatch or NaN by chance)
        y = torch.zeros_like(rows)
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
        block = min(triton.next_power_of_2(d), 512)
        per_program = triton.cdiv(n, _programs_for(n, x.device))
        programs = triton.cdiv(n, per_program)
        grad_x = torch.empty_like(rows)
        partial = torch.empty((programs, d), dtype=torch.float32, device=x.device)
        rms_norm_bwd[(programs,)](rows, w, grad_rows, rstd, grad_x, partial, n, d, per_program,
                                  BLOCK_D=block, num_warps=_warps(block))
        # Stage two: the programs' partial rows, added on the host.
        return grad_x.view(x.shape), partial.sum(0).to(w.dtype)
