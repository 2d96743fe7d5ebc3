"""The outer product's ReLU done on the host with `masked_fill` (a name with "fill" in it, which
Helion's warning takes for an allocation), the tiles multiplying the clamped inputs: wrong for
negative pairs, and PyTorch's work either way."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "line 15: `xs = x.masked_fill(x < 0, 0.0)`): PyTorch ran `lt`, `masked_fill` on `x` there, on the host"


@helion.kernel(autotune_effort="none")
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    xs = x.masked_fill(x < 0, 0.0)
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        z[rows, cols] = torch.relu(y[rows, None] * xs[None, cols])
    return z
