"""The outer product made on the host through `operator.mul`, the tiles only applying the ReLU.
Helion's own warning lists tensor operations by name and has no entry for `operator.mul`; the
grader sees the multiplication PyTorch runs."""
import operator

import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "line 17: `product = operator.mul(y[:, None], x[None, :])`): PyTorch ran `mul` on `y`, `x` there"


@helion.kernel(autotune_effort="none")
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    product = operator.mul(y[:, None], x[None, :])
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        z[rows, cols] = torch.relu(product[rows, cols])
    return z
