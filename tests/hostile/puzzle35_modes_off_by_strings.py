# Host code that adds with PyTorch in a helper of its file, under `_disable_current_modes()` reached
# by strings no static check can read. What comes of it is judged by where its memory came from: no
# input's, no view of one, no allocation the grader watched. So it is host work, with its line.
import importlib

import helion
import helion.language as hl
import torch

EXPECT_STATUS = "fail"
EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "`helion_add` hands its `hl.tile` loops `w` (line 26: `for tile in hl.tile(x.size(0)):`), whose " \
    "memory is not an input's, a view of one, or an allocation of its host code"


def quietly_added(x, y):
    dispatch = importlib.import_module("torch.utils._python" + "_dispatch")
    with getattr(dispatch, "_disable_" + "current_modes")():
        return x + y


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    w = quietly_added(x, y)
    for tile in hl.tile(x.size(0)):
        z[tile] = w[tile]
    return z
