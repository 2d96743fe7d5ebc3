"""The sum moved into a plain helper function that the kernel calls before its loop: the helper
runs on the host, as PyTorch, whatever its name."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "line 17: `s = combine(x, y)`): PyTorch ran `add` on `x`, `y` there, on the host, inside `combine` (line 12: `return a + b`)"


def combine(a, b):
    return a + b


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    s = combine(x, y)
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        z[tile] = s[tile]
    return z
