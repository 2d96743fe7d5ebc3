# The sum of squares divided by D - 1, the unbiased variance, where layer norm divides by D.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "the unbiased variance"


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
        r = torch.rsqrt((xc * xc).sum(dim=1) / (d - 1) + 1e-5)
        y[rows, :] = (xc * r[:, None] * w[None, :].to(torch.float32) + b[None, :].to(torch.float32)).to(y.dtype)
        mean[rows] = mu
        rstd[rows] = r
    return y, mean, rstd
