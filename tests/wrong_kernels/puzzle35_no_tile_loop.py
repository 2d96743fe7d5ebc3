"""No `hl.tile` loop at all: Helion has no device code to generate, the sum is PyTorch's."""
import helion
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "has no `hl.tile` loop"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y
