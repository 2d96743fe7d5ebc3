"""Stores the sum into `x` and returns it: the right values, in an input."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "input_modified"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    for tile in hl.tile(x.size(0)):
        x[tile] = x[tile] + y[tile]
    return x
