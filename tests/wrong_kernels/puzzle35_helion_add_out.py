"""The sum written straight into the output with `torch.add(..., out=z)` before a loop that
copies it onto itself: PyTorch's work, however it is spelled."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "line 14: `torch.add(x, y, out=z)`): PyTorch ran `add` on `x`, `y` there"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    torch.add(x, y, out=z)
    for tile in hl.tile(x.size(0)):
        z[tile] = z[tile] + 0
    return z
