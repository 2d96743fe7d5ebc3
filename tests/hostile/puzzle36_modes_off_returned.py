# Host code that returns an outer product made with PyTorch with dispatch modes off, reached by
# strings, after tiles that write an output it drops. The returned tensor's memory is no
# input's and no allocation the grader watched: host work, with the line of the `return`.
import helion
import helion.language as hl
import torch

EXPECT_STATUS = "fail"
EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "`helion_mul_relu` returns `product` (line 29: `return product`), whose memory is not an input's"


def unwatched():
    return getattr(getattr(torch.utils, "_python" + "_dispatch"), "_disable_" + "current_modes")()


def outer(x, y):
    with unwatched():
        return torch.relu(y[:, None] * x[None, :])


@helion.kernel(autotune_effort="none")
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        z[rows, cols] = x[None, cols] * y[rows, None]
    product = outer(x, y)
    return product
