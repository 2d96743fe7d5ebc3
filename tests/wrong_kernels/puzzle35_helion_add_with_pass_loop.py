"""The sum made before the loop, the loop left as the stub's `pass`: attempted, and computed with
PyTorch on the host (not "not attempted")."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "line 13: `z = x + y`"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = x + y
    for tile in hl.tile(x.size(0)):
        pass
    return z
