# From pytorch/helion examples/softmax.py (kernel `softmax_decomposed`) at commit ef091f416a50c443b38e4c8bff2980777f5ff225.
# Adapted: renamed to the puzzle's helion_softmax; autotune_effort="none"; the row read in fp32
# and the result rounded once to the output's dtype, as the puzzle's spec is.
import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_softmax(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        values = x[tile_n, :].to(torch.float32)
        amax = torch.amax(values, dim=1, keepdim=True)
        exp = torch.exp(values - amax)
        sum_exp = torch.sum(exp, dim=1, keepdim=True)
        out[tile_n, :] = (exp / sum_exp).to(out.dtype)
    return out
