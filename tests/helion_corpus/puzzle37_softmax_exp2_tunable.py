# Written for this corpus, after pytorch/helion examples/softmax.py: `@helion.kernel()` as Helion's examples
# write it (no autotune_effort), its row tiles a registered block size, and a tunable (`hl.register_tunable`)
# choosing `exp` or `exp2` of the scaled difference, both right. In Helion's interpreter the tunable takes its
# default, as the default config a GPU compiles with gives it (its reference asserted, and that was read as
# the learner's AssertionError). `LOG2E` is a module-level constant, kept by the definitions-only import.
import math

import helion
import helion.language as hl
import torch
from helion.autotuner import BooleanFragment

LOG2E = math.log2(math.e)


@helion.kernel()
def helion_softmax(x: torch.Tensor) -> torch.Tensor:
    n0, t = x.size()
    z = torch.empty_like(x)
    block_rows = hl.register_block_size(n0)
    use_exp2 = hl.register_tunable("use_exp2", BooleanFragment())
    for rows in hl.tile(n0, block_size=block_rows):
        row = x[rows, :].to(torch.float32)
        shifted = row - torch.amax(row, dim=1, keepdim=True)
        if use_exp2:
            e = torch.exp2(shifted * LOG2E)
        else:
            e = torch.exp(shifted)
        z[rows, :] = (e / e.sum(dim=1, keepdim=True)).to(z.dtype)
    return z
