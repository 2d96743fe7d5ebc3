"""The reference with one row per program (a heuristic sets ROWS_TILE_SIZE to 1): 65536 programs
of 1024 elements each instead of 16384 of 4096; the same bytes, four times the launches of a
program and a quarter of the loads in flight per program; expect a little slower."""
import triton
import triton.language as tl


@triton.heuristics({"ROWS_TILE_SIZE": lambda args: 1})
@triton.jit
def weighted_sum_fwd(
    x_ptr, weight_ptr, output_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, output_stride_row,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    acc = tl.zeros((1,), dtype=tl.float32)
    for start in range(0, D, D_TILE_SIZE):
        cols = start + tl.arange(0, D_TILE_SIZE)
        x = tl.load(x_ptr + row * x_stride_row + cols * x_stride_dim, mask=cols < D, other=0.0)
        w = tl.load(weight_ptr + cols * weight_stride_dim, mask=cols < D, other=0.0)
        acc += tl.sum(x * w, axis=0)
    tl.store(output_ptr + row * output_stride_row + tl.arange(0, 1), acc)
