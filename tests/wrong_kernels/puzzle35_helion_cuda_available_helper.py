"""A helper asks PyTorch whether a GPU is there, through a name assigned from the question, and
adds x to itself where there is one. Host code sees a GPU wherever it is graded
(grader.sandbox.world), so the CPU takes the GPU's path and finds it wrong, as a GPU would."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "case classic[seed=0] (N0=200, B0=32): wrong values in `z`: 200 of 200 elements differ"


def pick(x, y):
    on_gpu = torch.cuda.is_available()
    return x if on_gpu else y


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    w = pick(x, y)
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + w[tile]
    return z
