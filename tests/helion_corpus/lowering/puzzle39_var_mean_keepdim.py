"""A correct layer norm, with torch.var_mean(keepdim=True): Helion 1.5.1 lowers the mean masked
with the row mask, and the tiled run differs from Helion's own interpreter (which agrees with the
spec). The verdict fails the case, as a GPU would, and says the compiler may be at fault."""
import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    m, n = x.size()
    y = torch.empty_like(x)
    mean = torch.empty([m], dtype=torch.float32, device=x.device)
    rstd = torch.empty([m], dtype=torch.float32, device=x.device)
    for rows in hl.tile(m):
        row = x[rows, :].to(torch.float32)
        var, mu = torch.var_mean(row, dim=1, keepdim=True, correction=0)
        r = torch.rsqrt(var + 1e-5)
        y[rows, :] = ((row - mu) * r * w[None, :].to(torch.float32) + b[None, :].to(torch.float32)).to(y.dtype)
        mean[rows] = mu.squeeze(1)
        rstd[rows] = r.squeeze(1)
    return y, mean, rstd
