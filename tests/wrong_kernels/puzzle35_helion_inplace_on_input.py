"""An in-place multiply by one on an input before the loop: it changes no value, but it is
PyTorch reading and writing `x` on the host."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "line 13: `x.mul_(1)`): PyTorch ran `mul_` on `x` there"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.mul_(1)
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + y[tile]
    return z
