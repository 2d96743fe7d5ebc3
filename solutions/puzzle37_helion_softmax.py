import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_softmax(x: torch.Tensor) -> torch.Tensor:
    n0, t = x.size()
    z = torch.empty_like(x)
    for rows in hl.tile(n0):
        row = x[rows, :].to(torch.float32)
        # Each row's maximum subtracted: every exponent is at most 0.
        e = torch.exp(row - torch.amax(row, dim=1, keepdim=True))
        z[rows, :] = (e / e.sum(dim=1, keepdim=True)).to(z.dtype)
    return z
