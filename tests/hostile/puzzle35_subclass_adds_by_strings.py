# Host code that only takes a view, of a tensor subclass that a helper module of the learner's own
# builds with `type()` from names spelled in pieces: its dispatch hook adds. The view's memory is no
# input's and no allocation the grader watched, so it is host work, with its line.
import helion
import helion.language as hl
import torch

import subclass_by_strings

EXPECT_STATUS = "fail"
EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "`helion_add` hands its `hl.tile` loops `w` (line 20: `for tile in hl.tile(x.size(0)):`), whose " \
    "memory is not an input's"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    w = subclass_by_strings.adding(x, y).view(-1)
    for tile in hl.tile(x.size(0)):
        z[tile] = w[tile]
    return z
