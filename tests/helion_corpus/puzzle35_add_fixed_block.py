# From pytorch/helion examples/add.py (kernel `add`) at commit ef091f416a50c443b38e4c8bff2980777f5ff225.
# Adapted: one dimension with a tile size the kernel fixes (block_size=64), as a learner may
# write it: graded at 64, its tails exercised.
import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size(0), block_size=64):
        out[tile] = x[tile] + y[tile]
    return out
