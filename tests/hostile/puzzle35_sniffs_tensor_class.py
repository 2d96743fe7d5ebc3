# Host code that tells the grader's tensors from a GPU's by their Python class, in a helper of its
# file: on the CPU they are GPU tensors of the grader's own class, on a GPU plain ones. It adds in
# its tiles where it is graded and with PyTorch on the host where it is used. The one question the
# grader's world cannot answer as a GPU does is refused before anything runs, with its line.
import helion
import helion.language as hl
import torch

EXPECT_STATUS = "fail"
EXPECT_KIND = "sniffing"
EXPECT_SAYS = "`plain` at line 15: `return type(x) is torch.Tensor`: `type(x)` asks for a value's Python class"


def plain(x):
    return type(x) is torch.Tensor


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    if plain(x):
        return x + y
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + y[tile]
    return z
