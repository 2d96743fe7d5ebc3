# Correct: the mamba-style RMS norm (puzzle22_mamba_rms_norm.py) with one more heuristic, one that
# reads a runtime argument of the launch: `EVEN_N` when the block divides `N`, and then no mask. On
# a GPU a heuristic gets every argument by name; so does the sm_90 compile check of a wrapper's
# launches (it gave none: `KeyError: 'N'`).
import math

import torch
import triton
import triton.language as tl

EXPECT_STATUS = "pass"

configs_autotune = [
    triton.Config({}, num_warps=1),
    triton.Config({}, num_warps=4),
]


@triton.autotune(configs=configs_autotune, key=["N", "HAS_BIAS", "HAS_W1"])
@triton.heuristics({"HAS_BIAS": lambda args: args["B"] is not None})
@triton.heuristics({"HAS_W1": lambda args: args["W1"] is not None})
@triton.heuristics({"EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0})
@triton.jit
def _rms_norm_fwd_1pass_kernel(
    X,  # pointer to the input
    Y,  # pointer to the output
    W,  # pointer to the weights
    B,  # pointer to the biases
    W1,
    Rstd,  # pointer to the 1/std
    stride_x_row,  # how much to increase the pointer when moving by 1 row
    stride_y_row,
    N,  # number of columns in X
    eps,  # epsilon to avoid division by zero
    BLOCK_N: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    HAS_W1: tl.constexpr,
    EVEN_N: tl.constexpr,
):
    row = tl.program_id(0)
    X += row * stride_x_row
    Y += row * stride_y_row
    cols = tl.arange(0, BLOCK_N)
    if EVEN_N:
        x = tl.load(X + cols).to(tl.float32)
    else:
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    xbar = tl.where(cols < N, x, 0.0)
    var = tl.sum(xbar * xbar, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Rstd + row, rstd)
    mask = cols < N
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    if HAS_W1:
        w += tl.load(W1 + cols, mask=mask).to(tl.float32)
    x_hat = x * rstd
    y = x_hat * w
    if HAS_BIAS:
        y += tl.load(B + cols, mask=mask).to(tl.float32)
    tl.store(Y + cols, y, mask=mask)


@triton.autotune(configs=configs_autotune, key=["N", "HAS_BIAS", "RECOMPUTE_OUTPUT"])
@triton.heuristics({"HAS_BIAS": lambda args: args["B"] is not None})
@triton.heuristics({"RECOMPUTE_OUTPUT": lambda args: args["Y"] is not None})
@triton.jit
def _rms_norm_bwd_kernel(
    X, W, B, Y, DY, DX, DW, Rstd,
    stride_x_row, stride_y_row, stride_dy_row, stride_dx_row,
    M,  # number of rows in X
    N,  # number of columns in X
    rows_per_program,
    BLOCK_N: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    RECOMPUTE_OUTPUT: tl.constexpr,
):
    # Map the program id to the elements of X, DX, and DY it should compute.
    row_block_id = tl.program_id(0)
    row_start = row_block_id * rows_per_program
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    X += row_start * stride_x_row
    DY += row_start * stride_dy_row
    DX += row_start * stride_dx_row
    if RECOMPUTE_OUTPUT:
        Y += row_start * stride_y_row
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    if RECOMPUTE_OUTPUT and HAS_BIAS:
        b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_N,), dtype=tl.float32)
    row_end = min((row_block_id + 1) * rows_per_program, M)
    for row in range(row_start, row_end):
        x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
        dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
        rstd = tl.load(Rstd + row)
        xhat = x * rstd
        xhat = tl.where(mask, xhat, 0.0)
        if RECOMPUTE_OUTPUT:
            y = xhat * w + b if HAS_BIAS else xhat * w
            tl.store(Y + cols, y, mask=mask)
        wdy = w * dy
        dw += dy * xhat
        c1 = tl.sum(xhat * wdy, axis=0) / N
        dx = (wdy - xhat * c1) * rstd
        tl.store(DX + cols, dx, mask=mask)
        X += stride_x_row
        if RECOMPUTE_OUTPUT:
            Y += stride_y_row
        DY += stride_dy_row
        DX += stride_dx_row
    tl.store(DW + row_block_id * N + cols, dw, mask=mask)


def _rms_norm_fwd(x, weight, bias, eps, weight1=None):
    M, N = x.shape
    assert x.stride(-1) == 1
    assert weight.shape == (N,)
    if bias is not None:
        assert bias.shape == (N,)
    y = torch.empty_like(x)
    rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
    # Less than 64KB per feature: enqueue fused kernel
    MAX_FUSED_SIZE = 65536 // x.element_size()
    BLOCK_N = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
    if N > BLOCK_N:
        raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
    _rms_norm_fwd_1pass_kernel[(M,)](x, y, weight, bias, weight1, rstd, x.stride(0), y.stride(0), N, eps,
                                     BLOCK_N)
    return y, rstd


def _rms_norm_bwd(dy, x, weight, bias, eps, rstd):
    M, N = x.shape
    if dy.stride(-1) != 1:
        dy = dy.contiguous()
    dx = torch.empty_like(x)
    MAX_FUSED_SIZE = 65536 // x.element_size()
    BLOCK_N = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
    sm_count = 132  # an H100's
    _dw = torch.empty((sm_count, N), dtype=torch.float32, device=weight.device)
    rows_per_program = math.ceil(M / sm_count)
    grid = (sm_count,)
    _rms_norm_bwd_kernel[grid](x, weight, bias, None, dy, dx, _dw, rstd, x.stride(0), 0, dy.stride(0),
                               dx.stride(0), M, N, rows_per_program, BLOCK_N)
    return dx, _dw.sum(0).to(weight.dtype)


class RMSNormFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        x_shape_og = x.shape
        x_rows = x.reshape(-1, x.shape[-1])
        if x_rows.stride(-1) != 1:
            x_rows = x_rows.contiguous()
        y, rstd = _rms_norm_fwd(x_rows, w, None, 1e-6)
        ctx.save_for_backward(x, w, rstd)
        ctx.x_shape_og = x_shape_og
        return y.reshape(x_shape_og)

    @staticmethod
    def backward(ctx, dy):
        x, w, rstd = ctx.saved_tensors
        x_rows = x.reshape(-1, x.shape[-1])
        if x_rows.stride(-1) != 1:
            x_rows = x_rows.contiguous()
        dy = dy.reshape(-1, dy.shape[-1])
        dx, dw = _rms_norm_bwd(dy, x_rows, w, None, 1e-6, rstd)
        return dx.reshape(ctx.x_shape_og), dw
