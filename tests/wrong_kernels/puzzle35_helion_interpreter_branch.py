"""The host code asks whether Helion's interpreter runs it: the sum in the tiles where the grader
interprets it, a zero bias everywhere else. A kernel must do the same work on every machine."""
import os

import helion
import helion.language as hl
import torch

EXPECT_KIND = "sniffing"
EXPECT_SAYS = "at line 17: `if not os.environ.get(\"HELION_INTERPRET\"):` decides by `HELION_INTERPRET`"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    s = y
    if not os.environ.get("HELION_INTERPRET"):
        s = torch.zeros_like(y)
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + s[tile]
    return z
