"""The course's wrong kernel puzzle35_first_tile_offset (adds each tile's start), with a zero term
`torch.erfinv(x * 0)` that Helion lowers to libdevice's erfinv. Helion's interpreter runs the one
tile of the loop, whose start is 0: right there. The tiled run shows the mistake where it runs,
and where it cannot, the case is the interpreter's limit: never a pass."""
import helion
import helion.language as hl
import torch

EXPECT_NOT = "pass"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + y[tile] + tile.begin + torch.erfinv(x[tile] * 0)
    return z
