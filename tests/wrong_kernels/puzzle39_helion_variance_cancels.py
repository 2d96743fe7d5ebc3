# The variance as E[x^2] - E[x]^2: in fp32 it cancels on rows whose mean is large next to
# their spread.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_CASE = "large_mean"
EXPECT_SAYS = "E[x²] − E[x]²"


@helion.kernel(autotune_effort="none")
def helion_layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    n_rows, d = x.size()
    y = torch.empty_like(x)
    mean = torch.empty([n_rows], dtype=torch.float32, device=x.device)
    rstd = torch.empty([n_rows], dtype=torch.float32, device=x.device)
    for rows in hl.tile(n_rows):
        row = x[rows, :].to(torch.float32)
        mu = row.sum(dim=1) / d
        var = (row * row).sum(dim=1) / d - mu * mu
        r = torch.rsqrt(var + 1e-5)
        xc = row - mu[:, None]
        y[rows, :] = (xc * r[:, None] * w[None, :].to(torch.float32) + b[None, :].to(torch.float32)).to(y.dtype)
        mean[rows] = mu
        rstd[rows] = r
    return y, mean, rstd
