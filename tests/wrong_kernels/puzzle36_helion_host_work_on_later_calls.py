"""The outer product made by PyTorch on the host on two calls of every three: the calls the
grader makes of each case fall so that a look at the host code in a run of its own sees only an
allocation. The runs whose values are judged are watched too."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "PyTorch ran `mul` on `y`, `x` there, on the host, inside `outer`"

CALLS = [0]


def outer(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    CALLS[0] += 1
    if CALLS[0] % 3 == 2:
        return torch.empty([y.size(0), x.size(0)], dtype=x.dtype, device=x.device)
    return torch.mul(y[:, None], x[None, :])


@helion.kernel(autotune_effort="none")
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    product = outer(x, y)
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        z[rows, cols] = torch.relu(product[rows, cols])
    return z
