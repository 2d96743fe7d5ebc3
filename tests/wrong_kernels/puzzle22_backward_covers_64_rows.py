# Puzzle 22 with a backward of one program and one tile of 64 rows: right for every batch of
# at most 64 rows, as all the small cases are; past that, rows 64 on get no gradient and the
# weight's gradient sums the first 64 rows only (grad_x past row 63 stays zero).
import torch
import triton
import triton.language as tl

EPS = 1e-6

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "(64, 0): yours"
EXPECT_CASE = "many_rows"


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
    # One program, one (64, BLOCK_D) tile: every row at once, as long as there are at most 64.
    rows = tl.arange(0, 64)
    cols = tl.arange(0, BLOCK_D)
    mask = (rows < ROWS)[:, None] & (cols < D)[None, :]
    offsets = rows[:, None] * D + cols[None, :]
    w = tl.load(w_ptr + cols, mask=cols < D, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(grad_y_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.load(rstd_ptr + rows, mask=rows < ROWS, other=0.0)
    xhat = x * rstd[:, None]
    wg = w[None, :] * g
    c = tl.sum(wg * xhat, axis=1) / D
    tl.store(grad_x_ptr + offsets, rstd[:, None] * (wg - xhat * c[:, None]), mask=mask)
    tl.store(partial_grad_w_ptr + cols, tl.sum(g * xhat, axis=0), mask=cols < D)


def _warps(block: int) -> int:
    # Enough threads for a wide row, at most 16 elements of it per thread and vector.
    return max(1, min(16, block // 256))


def _programs_for(rows: int, device: torch.device) -> int:
    # A few programs per SM: enough to fill the GPU, few partial rows for the host to sum.
    # (The same on every device: a wrapper that asks which device it is on is refused.)
    return min(rows, 4)


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
        per_program, programs = n, 1
        grad_x = torch.zeros_like(rows)
        partial = torch.empty((programs, d), dtype=torch.float32, device=x.device)
        rms_norm_bwd[(programs,)](rows, w, grad_rows, rstd, grad_x, partial, n, d, per_program,
                                  BLOCK_D=block, num_warps=_warps(block))
        # Stage two: the programs' partial rows, added on the host.
        return grad_x.view(x.shape), partial.sum(0).to(w.dtype)
