"""The host code asks which device it runs on: the sum in the tiles on a GPU, but PyTorch's on a
CPU, where the grader's interpreter runs. A kernel must do the same work everywhere."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "sniffing"
EXPECT_SAYS = "at line 15: `if x.device.type == \"cpu\":` decides by `x.device` (the tensor's device)"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    s = y
    if x.device.type == "cpu":
        s = torch.zeros_like(y)
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + s[tile]
    return z
