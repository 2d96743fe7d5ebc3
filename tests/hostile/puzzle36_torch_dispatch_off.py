# Host code that makes the outer product with PyTorch under `torch._C._DisableTorchDispatch()`, by
# an alias of another name: the kernel's tiles only apply the ReLU. Refused before anything runs.
import helion
import helion.language as hl
import torch
from torch._C import _DisableTorchDispatch as quietly

EXPECT_STATUS = "fail"
EXPECT_KIND = "sniffing"
EXPECT_SAYS = "`puzzle36_torch_dispatch_off.py` at line 6: `from torch."  # then the switch, named


@helion.kernel(autotune_effort="none")
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    with quietly():
        product = y[:, None] * x[None, :]
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        z[rows, cols] = torch.relu(product[rows, cols])
    return z
