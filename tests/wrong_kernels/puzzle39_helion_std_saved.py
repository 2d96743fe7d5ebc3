# y is right, but rstd holds the standard deviation, not its reciprocal.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "the standard deviation returned as rstd"


@helion.kernel(autotune_effort="none")
def helion_layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    n_rows, d = x.size()
    y = torch.empty_like(x)
    mean = torch.empty([n_rows], dtype=torch.float32, device=x.device)
    rstd = torch.empty([n_rows], dtype=torch.float32, device=x.device)
    for rows in hl.tile(n_rows):
        row = x[rows, :].to(torch.float32)
        mu = row.sum(dim=1) / d
        xc = row - mu[:, None]
        std = torch.sqrt((xc * xc).sum(dim=1) / d + 1e-5)
        y[rows, :] = (xc / std[:, None] * w[None, :].to(torch.float32) + b[None, :].to(torch.float32)).to(y.dtype)
        mean[rows] = mu
        rstd[rows] = std
    return y, mean, rstd
