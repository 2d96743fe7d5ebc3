# The outer product made by PyTorch on the host, the tiles only applying the ReLU: half the work,
# and the N1 x N0 product written to memory, which is what fusion avoids.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"


@helion.kernel(autotune_effort="none")
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    product = y[:, None] * x[None, :]
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        z[rows, cols] = torch.relu(product[rows, cols])
    return z
