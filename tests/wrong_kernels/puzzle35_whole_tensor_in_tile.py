"""Adds the whole of `y` to a tile of `x`: shapes that do not broadcast, which Helion's compiler
refuses with the line (its interpreter, one tile spanning the vector, would not notice)."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "compile"
EXPECT_SAYS = "line 15: `z[tile] = x[tile] + y`"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + y
    return z
