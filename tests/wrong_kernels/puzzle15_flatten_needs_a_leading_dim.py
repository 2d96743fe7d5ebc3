"""Flattens the leading dims with `x.flatten(0, -2)`, which needs at least one: an `x` of
shape `(D,)` (no leading dims, a 0-d output) raises instead of giving one row. The kernels
are written out here (not imported from solutions/) since a learner file is imported
definitions-only, without its `sys.path` changes."""
import torch
import triton
import triton.language as tl

EXPECT_KIND = "exception"
EXPECT_CASE = "no_leading_dims"


@triton.jit
def weighted_sum_fwd(x_ptr, w_ptr, y_ptr, ROWS, D, ROWS_TILE: tl.constexpr, D_TILE: tl.constexpr):
    row0 = tl.program_id(0) * ROWS_TILE
    x_block = tl.make_block_ptr(x_ptr, (ROWS, D), (D, 1), (row0, 0), (ROWS_TILE, D_TILE), (1, 0))
    w_block = tl.make_block_ptr(w_ptr, (D,), (1,), (0,), (D_TILE,), (0,))
    acc = tl.zeros([ROWS_TILE], dtype=tl.float32)
    for _ in range(tl.cdiv(D, D_TILE)):
        x = tl.load(x_block, boundary_check=(0, 1), padding_option="zero")
        w = tl.load(w_block, boundary_check=(0,), padding_option="zero")
        acc += tl.sum(x * w[None, :], axis=1)
        x_block = x_block.advance((0, D_TILE))
        w_block = w_block.advance((D_TILE,))
    y_block = tl.make_block_ptr(y_ptr, (ROWS,), (1,), (row0,), (ROWS_TILE,), (0,))
    tl.store(y_block, acc, boundary_check=(0,))


@triton.jit
def weighted_sum_bwd(x_ptr, w_ptr, g_ptr, gx_ptr, partial_ptr, ROWS, D,
                     ROWS_TILE: tl.constexpr, D_TILE: tl.constexpr):
    tile = tl.program_id(0)
    row0 = tile * ROWS_TILE
    g_block = tl.make_block_ptr(g_ptr, (ROWS,), (1,), (row0,), (ROWS_TILE,), (0,))
    g = tl.load(g_block, boundary_check=(0,), padding_option="zero")
    for d0 in range(0, D, D_TILE):
        x_block = tl.make_block_ptr(x_ptr, (ROWS, D), (D, 1), (row0, d0), (ROWS_TILE, D_TILE), (1, 0))
        gx_block = tl.make_block_ptr(gx_ptr, (ROWS, D), (D, 1), (row0, d0), (ROWS_TILE, D_TILE), (1, 0))
        w_block = tl.make_block_ptr(w_ptr, (D,), (1,), (d0,), (D_TILE,), (0,))
        p_block = tl.make_block_ptr(partial_ptr, (tl.cdiv(ROWS, ROWS_TILE), D), (D, 1), (tile, d0),
                                    (1, D_TILE), (1, 0))
        x = tl.load(x_block, boundary_check=(0, 1), padding_option="zero")
        w = tl.load(w_block, boundary_check=(0,), padding_option="zero")
        tl.store(gx_block, g[:, None] * w[None, :], boundary_check=(0, 1))
        tl.store(p_block, tl.sum(x * g[:, None], axis=0)[None, :], boundary_check=(0, 1))


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        d = x.shape[-1]
        rows_x = x.flatten(0, -2).contiguous()  # Mistake: x.reshape(-1, d) also takes a 1-D x.
        y = torch.empty(rows_x.shape[0], dtype=x.dtype, device=x.device)
        weighted_sum_fwd[(triton.cdiv(rows_x.shape[0], 16),)](rows_x, weight, y, rows_x.shape[0], d,
                                                             ROWS_TILE=16, D_TILE=64)
        ctx.save_for_backward(x, weight)
        return y.view(x.shape[:-1])

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        d = x.shape[-1]
        rows_x = x.flatten(0, -2).contiguous()
        g = grad_output.reshape(-1).contiguous()
        tiles = triton.cdiv(rows_x.shape[0], 16)
        grad_x = torch.empty_like(rows_x)
        partial = torch.empty((tiles, d), dtype=x.dtype, device=x.device)
        weighted_sum_bwd[(tiles,)](rows_x, weight, g, grad_x, partial, rows_x.shape[0], d,
                                   ROWS_TILE=16, D_TILE=64)
        return grad_x.view(x.shape), partial.sum(0)
