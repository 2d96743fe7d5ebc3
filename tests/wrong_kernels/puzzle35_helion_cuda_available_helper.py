"""A helper asks PyTorch whether a GPU is there, through a name assigned from the question: the
kernel would compute differently where the grader runs than on a GPU."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "sniffing"
EXPECT_SAYS = "`pick` at line 13: `return x if on_gpu else y` decides by `on_gpu` (assigned from the device)"


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
