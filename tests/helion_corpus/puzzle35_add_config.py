# From pytorch/helion examples/add.py (kernel `add`) at commit ef091f416a50c443b38e4c8bff2980777f5ff225, with an explicit
# `config=helion.Config(block_sizes=[...], num_warps=4)` as examples/attention.py writes one.
# Adapted: one dimension (the puzzle's vector). The grader keeps the config but its block sizes,
# which are each case's.
import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[128], num_warps=4))
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size(0)):
        out[tile] = x[tile] + y[tile]
    return out
