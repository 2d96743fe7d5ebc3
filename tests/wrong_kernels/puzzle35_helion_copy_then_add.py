"""`x` copied into the output on the host with `copy_`, the tiles adding only `y`: the copy is
data moved by PyTorch, not by the kernel."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "line 14: `z.copy_(x)`): PyTorch ran `copy_` on `x` there"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    z.copy_(x)
    for tile in hl.tile(x.size(0)):
        z[tile] = z[tile] + y[tile]
    return z
