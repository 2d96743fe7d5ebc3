# Layer norm written as Helion's examples/layer_norm.py writes it: checks of shapes and an
# optional bias (`if b is not None:`) outside the loop, where nothing is computed.
import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    n_rows, d = x.size()
    assert w.size(0) == d, f"weight size mismatch {w.size(0)} != {d}"
    if b is not None:
        assert b.size(0) == d, f"bias size mismatch {b.size(0)} != {d}"
    y = torch.empty_like(x)
    mean = x.new_empty([n_rows], dtype=torch.float32)
    rstd = torch.empty([n_rows], dtype=torch.float32, device=x.device)
    for rows in hl.tile(n_rows):
        row = x[rows, :].to(torch.float32)
        mu = row.sum(dim=1) / d
        xc = row - mu[:, None]
        r = torch.rsqrt((xc * xc).sum(dim=1) / d + 1e-5)
        out = xc * r[:, None] * w[None, :].to(torch.float32)
        if b is not None:
            out = out + b[None, :].to(torch.float32)
        y[rows, :] = out.to(y.dtype)
        mean[rows] = mu
        rstd[rows] = r
    return y, mean, rstd
