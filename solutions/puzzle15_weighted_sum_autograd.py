import torch
import triton

from puzzle13_weighted_sum_forward import weighted_sum_fwd
from puzzle14_weighted_sum_backward import weighted_sum_bwd
from puzzle16_weighted_sum_forward_descriptors import weighted_sum_fwd_desc
from puzzle17_weighted_sum_backward_descriptors import weighted_sum_bwd_desc

# Tiles, warps and register cap measured fastest on an H200 at 65536 x 1024 (benchmarks/
# tuning/weighted_sum_forward_tiles.py, tuning/weighted_sum_tiles.py): whole rows of D per program, and for the
# backward a partial buffer 32 times smaller than x.
FWD = {"ROWS_TILE_SIZE": 4, "D_TILE_SIZE": 1024, "num_warps": 8, "num_stages": 1, "maxnreg": 128}
BWD = {"ROWS_TILE_SIZE": 32, "D_TILE_SIZE": 1024, "num_warps": 8, "num_stages": 2}
LAUNCH_OPTIONS = ("num_warps", "num_stages", "maxnreg")

# At 65536 x 1024 the GPU does a forward + backward in about 0.21 ms, and the host needs nearly
# as long to issue it, so every host microsecond counts (benchmarks/step_profile.py). As in
# Triton's fused-softmax tutorial, keep each compiled kernel and launch it directly: a plain
# `kernel[grid](...)` works out the compiled version's key again on every call.
_compiled = {}


def _specialisation(args):
    """What Triton compiles a separate version for: pointer dtype, device and 16-byte
    alignment; integers equal to 1, multiples of 16, or beyond int32."""
    return tuple((a.dtype, a.device, a.data_ptr() % 16 == 0) if isinstance(a, torch.Tensor)
                 else (a == 1, a % 16 == 0, -2**31 <= a < 2**31) for a in args)


# Block pointers up to triton 3.8, tensor descriptors from 3.9, which removed block pointers
# (`tl.make_block_ptr` raises there): both pairs of kernels take the same arguments.
_allocator_set = {}


def _kernels(device):
    """(forward, backward, descriptors?) for the installed Triton."""
    major, minor = (int(part) for part in triton.__version__.split(".")[:2])
    if (major, minor) < (3, 9):
        return weighted_sum_fwd, weighted_sum_bwd, False
    if not _allocator_set:  # a descriptor built on the device needs scratch memory there (asked on no device)
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device=device))
        _allocator_set["set"] = True
    return weighted_sum_fwd_desc, weighted_sum_bwd_desc, True


def _rows_of(x, descriptors):
    """x as (rows, D). A descriptor needs 16-byte aligned rows: where D is not a multiple of 4,
    the rows go into a zero-padded buffer (a copy), and the kernels still see only D columns."""
    d = x.shape[-1]
    rows_x = x.reshape(-1, d)
    if not descriptors or (d % 4 == 0 and rows_x.is_contiguous()):
        return rows_x
    padded = x.new_zeros((rows_x.shape[0], (d + 3) // 4 * 4))
    padded[:, :d] = rows_x
    return padded


def _launch(kernel, programs, args, config):
    key = (kernel, _specialisation(args))
    compiled = _compiled.get(key)
    if compiled is None:
        compiled = kernel.warmup(*args, grid=(programs,), **config)
        if compiled is None:  # the interpreter compiles nothing: launch the plain way
            kernel[(programs,)](*args, **config)
            return
        _compiled[key] = compiled
    compiled[(programs, 1, 1)](*args, *(v for k, v in config.items() if k not in LAUNCH_OPTIONS))


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        forward, _, descriptors = _kernels(x.device)
        d = x.shape[-1]
        rows_x = _rows_of(x, descriptors)
        rows = rows_x.shape[0]
        y = x.new_empty(rows)
        stride_row, stride_dim = rows_x.stride()
        _launch(forward, triton.cdiv(rows, FWD["ROWS_TILE_SIZE"]),
                (rows_x, weight, y, stride_row, stride_dim, weight.stride(0), y.stride(0), rows, d), FWD)
        ctx.save_for_backward(x, weight)
        return y.view(x.shape[:-1])

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        _, backward, descriptors = _kernels(x.device)
        d = x.shape[-1]
        rows_x = _rows_of(x, descriptors)
        rows, width = rows_x.shape  # width > d only for padded rows
        grad_rows = grad_output.reshape(-1)
        tiles = triton.cdiv(rows, BWD["ROWS_TILE_SIZE"])
        grad_x = x.new_empty((rows, width))
        partial = x.new_empty((tiles, width), dtype=torch.float32)
        stride_row, stride_dim = rows_x.stride()
        _launch(backward, tiles,
                (rows_x, weight, grad_rows, grad_x, partial, stride_row, stride_dim, weight.stride(0),
                 grad_rows.stride(0), grad_x.stride(0), grad_x.stride(1), partial.stride(0), partial.stride(1),
                 rows, d), BWD)
        if width != d:
            grad_x, partial = grad_x[:, :d], partial[:, :d]
        return grad_x.reshape(x.shape), partial.sum(0)
