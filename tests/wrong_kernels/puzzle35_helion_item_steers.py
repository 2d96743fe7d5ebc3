"""The host reads a value of the data (`.sum().item()`) to choose what to compute: a decision
made by PyTorch on the host, from tensor data."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "line 14: `big = x.sum().item() > 1e30`): PyTorch ran `sum`, `.item()` on `x` there"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    big = x.sum().item() > 1e30
    for tile in hl.tile(x.size(0)):
        if big:
            z[tile] = x[tile]
        else:
            z[tile] = x[tile] + y[tile]
    return z
