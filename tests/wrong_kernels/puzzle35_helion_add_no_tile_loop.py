# No hl.tile loop at all: the whole kernel is PyTorch on the host, no device code.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y
