# Correct: RMS norm as Liger-Kernel's ops/rms_norm.py writes it. Casting modes are `tl.constexpr`
# constants, a dict maps their names to their values, another maps torch dtypes to Triton's, and
# the launch settings come from a helper that reads a module-level constant.
import torch
import triton
import triton.language as tl

EXPECT_STATUS = "pass"

MAX_FUSED_SIZE = 65536
_CASTING_MODE_NONE: tl.constexpr = tl.constexpr(-1)
_CASTING_MODE_LLAMA: tl.constexpr = tl.constexpr(0)
_CASTING_MODE_GEMMA: tl.constexpr = tl.constexpr(1)
_str_to_casting_mode = {
    "llama": _CASTING_MODE_LLAMA.value,
    "gemma": _CASTING_MODE_GEMMA.value,
    "none": _CASTING_MODE_NONE.value,
}
torch_to_triton_dtype = {
    torch.float32: tl.float32,
    torch.float16: tl.float16,
    torch.bfloat16: tl.bfloat16,
}


def calculate_settings(n):
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(f"Cannot launch Triton kernel since n = {n} exceeds the recommended Triton blocksize = "
                           f"{MAX_FUSED_SIZE}.")
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


@triton.jit
def _rms_norm_forward_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr, n_cols, eps,
                             OUT_DTYPE: tl.constexpr, casting_mode: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)
    if casting_mode == _CASTING_MODE_LLAMA:
        X_row = X_row.to(tl.float32)
    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = tl.math.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr + row_idx, rstd)
    X_row = X_row * rstd
    if casting_mode == _CASTING_MODE_LLAMA:
        Y_row = (X_row * W_row.to(tl.float32)).to(OUT_DTYPE)
    else:
        Y_row = (X_row * W_row).to(OUT_DTYPE)
    tl.store(Y_ptr + row_idx * Y_row_stride + col_offsets, Y_row, mask=mask)


@triton.jit
def _rms_norm_backward_kernel(dY_ptr, dY_row_stride, dX_ptr, dX_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr,
                              dW_ptr, dW_row_stride, n_rows, n_cols, rows_per_program,
                              casting_mode: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row_block_id = tl.program_id(0).to(tl.int64)
    row_start = row_block_id * rows_per_program
    row_end = min((row_block_id + 1) * rows_per_program, n_rows)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    dW_row = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0).to(tl.float32)
    for row_idx in range(row_start, row_end):
        dY_row = tl.load(dY_ptr + row_idx * dY_row_stride + col_offsets, mask=mask, other=0.0).to(tl.float32)
        X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0.0).to(tl.float32)
        rstd_row = tl.load(RSTD_ptr + row_idx)
        m = dY_row * W_row
        dX_row = rstd_row * m
        dX_row += rstd_row * (-(1 / n_cols) * rstd_row * rstd_row * tl.sum(m * X_row, axis=0) * X_row)
        dW_row += dY_row * (X_row * rstd_row)
        tl.store(dX_ptr + row_idx * dX_row_stride + col_offsets, dX_row.to(dX_ptr.dtype.element_ty), mask=mask)
    tl.store(dW_ptr + row_block_id * dW_row_stride + col_offsets, dW_row, mask=mask)


def rms_norm_forward(X, W, eps, casting_mode):
    if not isinstance(casting_mode, int):
        assert casting_mode in _str_to_casting_mode, f"Invalid casting mode: {casting_mode}"
        casting_mode = _str_to_casting_mode[casting_mode]
    shape = X.shape
    dim = shape[-1]
    X = X.reshape(-1, dim)
    n_rows, n_cols = X.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    RSTD = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    _rms_norm_forward_kernel[(n_rows,)](Y, Y.stride(0), X, X.stride(0), W, RSTD, n_cols, eps,
                                        OUT_DTYPE=torch_to_triton_dtype[X.dtype], casting_mode=casting_mode,
                                        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return Y.view(*shape), X, RSTD, BLOCK_SIZE, num_warps, casting_mode


def rms_norm_backward(dY, X, W, RSTD, casting_mode, BLOCK_SIZE, num_warps):
    shape = dY.shape
    dim = shape[-1]
    dY = dY.reshape(-1, dim).contiguous()
    n_rows, n_cols = dY.shape
    sm_count = 132
    _dW = torch.empty((sm_count, n_cols), dtype=torch.float32, device=W.device)
    rows_per_program = triton.cdiv(n_rows, sm_count)
    dX = torch.empty_like(dY)
    _rms_norm_backward_kernel[(sm_count,)](dY, dY.stride(0), dX, dX.stride(0), X, X.stride(0), W, RSTD, _dW,
                                           _dW.stride(0), n_rows, n_cols, rows_per_program,
                                           casting_mode=casting_mode, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return dX.view(*shape), _dW.sum(dim=0).to(W.dtype)


class RMSNormFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, W):
        Y, X_rows, RSTD, BLOCK_SIZE, num_warps, casting_mode = rms_norm_forward(X, W, 1e-6, "llama")
        ctx.casting_mode = casting_mode
        ctx.BLOCK_SIZE = BLOCK_SIZE
        ctx.num_warps = num_warps
        ctx.save_for_backward(X, W, RSTD)
        return Y

    @staticmethod
    def backward(ctx, dY):
        X, W, RSTD = ctx.saved_tensors
        X_rows = X.reshape(-1, X.shape[-1]).contiguous()
        dX, dW = rms_norm_backward(dY, X_rows, W, RSTD, ctx.casting_mode, ctx.BLOCK_SIZE, ctx.num_warps)
        return dX, dW
