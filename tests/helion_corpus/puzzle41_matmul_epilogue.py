# From pytorch/helion examples/matmul.py (kernel `matmul` and the epilogue of its `check`:
# bias added to the accumulator) at commit ef091f416a50c443b38e4c8bff2980777f5ff225.
# Adapted: the puzzle's kernel takes the bias, so the epilogue takes its tile; the epilogue is
# a function of this file (the puzzle's tanh GELU after the bias) called from the kernel's default
# argument, a lambda as the example's. (A bare function as the default does not work in Helion
# 1.5.1: its generated host code names the function where it is not defined.)
from __future__ import annotations

import torch
from torch import Tensor

import helion
import helion.language as hl

SQRT_2_OVER_PI = 0.7978845608028654  # sqrt(2 / pi)


def bias_gelu(acc: Tensor, bias: Tensor) -> Tensor:
    x = acc + bias.to(torch.float32)
    return 0.5 * x * (1.0 + torch.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


@helion.kernel(static_shapes=True)
def helion_matmul_bias_gelu(
    x: Tensor, y: Tensor, bias: Tensor, epilogue=lambda acc, bias: bias_gelu(acc, bias)
) -> Tensor:
    m, k = x.size()
    k2, n = y.size()
    assert k == k2, f"size mismatch {k} != {k2}"
    out = torch.empty([m, n], dtype=torch.promote_types(x.dtype, y.dtype), device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = epilogue(acc, bias[tile_n]).to(out.dtype)
    return out
