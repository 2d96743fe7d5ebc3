# From pytorch/helion examples/softmax.py (kernel `softmax`) at commit ef091f416a50c443b38e4c8bff2980777f5ff225.
# Adapted: renamed to the puzzle's helion_softmax; autotune_effort="none"; computed in fp32 and
# rounded once to the output's dtype, as the puzzle's spec is (its fp16 and bf16 cases).
import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_softmax(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        out[tile_n, :] = torch.nn.functional.softmax(x[tile_n, :].to(torch.float32), dim=1).to(out.dtype)
    return out
