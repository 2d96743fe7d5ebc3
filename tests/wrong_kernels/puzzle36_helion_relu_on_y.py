# The ReLU applied to y's tile before the product: negative where x < 0 and y > 0.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "the ReLU applied to y before the product"


@helion.kernel(autotune_effort="none")
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        z[rows, cols] = torch.relu(y[rows, None]) * x[None, cols]
    return z
