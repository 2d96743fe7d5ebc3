# Correct: an RMS norm wrapper written as kernel libraries write theirs. The output dtype reaches
# the kernel as a `tl.constexpr` (a Triton dtype), rows are viewed rather than copied where they
# can be, the backward asks `ctx.needs_input_grad`, a cache of launch settings is keyed on the
# input's alignment, and the partial rows of the weight's gradient are summed on the host.
import torch
import triton
import triton.language as tl

EXPECT_STATUS = "pass"

_settings = {}


@triton.jit
def _rms_forward(x_ptr, w_ptr, y_ptr, rstd_ptr, stride, D, eps, OUT: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(y_ptr + row * stride + cols, (x * rstd * w).to(OUT), mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def _rms_backward(x_ptr, w_ptr, dy_ptr, rstd_ptr, dx_ptr, dw_ptr, stride, dy_stride, ROWS, D,
                  ROWS_PER_PROGRAM, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_D], dtype=tl.float32)
    for row in range(pid * ROWS_PER_PROGRAM, tl.minimum((pid + 1) * ROWS_PER_PROGRAM, ROWS)):
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * dy_stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        xhat = x * rstd
        c = tl.sum(w * dy * xhat, axis=0) / D
        tl.store(dx_ptr + row * stride + cols, (rstd * (w * dy - xhat * c)).to(dx_ptr.dtype.element_ty), mask=mask)
        dw += dy * xhat
    tl.store(dw_ptr + pid * D + cols, dw, mask=mask)


def _launch_settings(x):
    key = (x.dtype, x.shape[-1], x.data_ptr() % 16 == 0)
    if key not in _settings:
        block = triton.next_power_of_2(x.shape[-1])
        _settings[key] = (block, max(1, min(16, block // 256)))
    return _settings[key]


def _out(dtype):
    return {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16}.get(dtype, tl.float32)


class RMSNormFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        shape = x.shape
        rows = x.view(-1, shape[-1]) if x.is_contiguous() else x.reshape(-1, shape[-1]).contiguous()
        n, d = rows.shape
        block, warps = _launch_settings(rows)
        y = torch.empty_like(rows)
        rstd = torch.empty(n, dtype=torch.float32, device=x.device)
        _rms_forward[(n,)](rows, w, y, rstd, rows.stride(0), d, 1e-6, OUT=_out(x.dtype), BLOCK_D=block,
                           num_warps=warps)
        ctx.save_for_backward(x, w, rstd)
        return y.view(shape)

    @staticmethod
    def backward(ctx, grad_output):
        x, w, rstd = ctx.saved_tensors
        d = x.shape[-1]
        rows = x.reshape(-1, d).contiguous()
        dy = grad_output.reshape(-1, d)
        if dy.stride(-1) != 1:
            dy = dy.contiguous()
        n = rows.shape[0]
        block, warps = _launch_settings(rows)
        per_program = triton.cdiv(n, min(n, 8))
        programs = triton.cdiv(n, per_program)
        dx = torch.empty_like(rows)
        partial = torch.empty((programs, d), dtype=torch.float32, device=x.device)
        _rms_backward[(programs,)](rows, w, dy, rstd, dx, partial, rows.stride(0), dy.stride(0), n, d, per_program,
                                   BLOCK_D=block, num_warps=warps)
        grad_w = partial.sum(0).to(w.dtype) if ctx.needs_input_grad[1] else None
        return dx.view(x.shape), grad_w
