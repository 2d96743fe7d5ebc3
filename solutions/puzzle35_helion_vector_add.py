import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + y[tile]
    return z
