# Allocation in every spelling and views of the inputs before the loop: nothing is computed on
# the host, so nothing is host work.
import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n = x.size(0)
    xv = x.view(-1)
    yv = y.reshape(n)
    scratch = torch.zeros_like(x)
    ones = x.new_empty([n]).fill_(1.0)
    z = torch.full([n], 0.0, dtype=x.dtype, device=x.device)
    for tile in hl.tile(n):
        z[tile] = xv[tile] + yv[tile] + scratch[tile] * ones[tile]
    return z
