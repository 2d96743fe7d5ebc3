"""The outer product made by PyTorch on the host, except while a dispatch mode records it: a
look at the host code in a run of its own would see only an allocation. Asking whether a mode
watches is refused before anything runs (grader.source.host_escapes.INTERNALS), with its line."""
import helion
import helion.language as hl
import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

EXPECT_KIND = "sniffing"
EXPECT_SAYS = "asks whether a dispatch mode is watching"


def outer(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if _get_current_dispatch_mode() is not None:
        return torch.zeros([y.size(0), x.size(0)], dtype=x.dtype, device=x.device)
    return torch.mul(y[:, None], x[None, :])


@helion.kernel(autotune_effort="none")
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    product = outer(x, y)
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        z[rows, cols] = torch.relu(product[rows, cols])
    return z
