# Host code that adds with PyTorch under `_disable_current_modes()`, where the dispatch mode that
# records host work sees nothing. The switch has no use in a puzzle and is refused before anything
# runs, with its line.
import helion
import helion.language as hl
import torch

EXPECT_STATUS = "fail"
EXPECT_KIND = "sniffing"
EXPECT_SAYS = "`helion_add` at line 16: `with torch.utils."  # then the switch, named


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    with torch.utils._python_dispatch._disable_current_modes():
        w = x + y
    for tile in hl.tile(x.size(0)):
        z[tile] = w[tile]
    return z
