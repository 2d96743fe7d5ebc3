"""Adds each tile's start index: right in Helion's interpreter, where one tile spans the vector
(its start is 0), wrong as Helion tiles it for a GPU. The tiled run, the Triton Helion generated
run tile by tile, shows it."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "tile by tile"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + y[tile] + tile.begin
    return z
