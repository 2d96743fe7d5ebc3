# Written for this corpus, after pytorch/helion examples/softmax.py (`softmax_decomposed`) at
# commit ef091f416a50c443b38e4c8bff2980777f5ff225: the row's maximum and sum with hl.reduce and combine functions of this file.
import helion
import helion.language as hl
import torch


def maximum(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.maximum(a, b)


def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a + b


@helion.kernel(autotune_effort="none")
def helion_softmax(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        values = x[tile_n, :].to(torch.float32)
        amax = hl.reduce(maximum, values, dim=1, other=float("-inf"), keep_dims=True)
        exp = torch.exp(values - amax)
        out[tile_n, :] = (exp / hl.reduce(add, exp, dim=1, keep_dims=True)).to(out.dtype)
    return out
