# From pytorch/helion examples/layer_norm.py (kernel `layer_norm_fwd`) at commit ef091f416a50c443b38e4c8bff2980777f5ff225.
# Adapted: renamed to the puzzle's helion_layer_norm, which takes (x, w, b) and normalises over
# the last dim (no normalized_shape argument, so its asserts on it are gone); eps a default as
# in the example; autotune_effort="none". The `if bias is not None:` branch is kept.
import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_layer_norm(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    eps: float = 1e-5,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m, n = x.size()
    assert weight.size(0) == n, f"weight size mismatch {weight.size(0)} != {n}"
    if bias is not None:
        assert bias.size(0) == n, f"bias size mismatch {bias.size(0)} != {n}"
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    mean = torch.empty([m], dtype=torch.float32, device=x.device)
    rstd = torch.empty([m], dtype=torch.float32, device=x.device)

    for tile_m in hl.tile(m):
        acc = x[tile_m, :].to(torch.float32)
        mean_val = torch.sum(acc, dim=-1) / n
        centered = acc - mean_val[:, None]
        var_val = torch.sum(centered * centered, dim=-1) / n
        rstd_val = torch.rsqrt(var_val + eps)
        normalized = centered * rstd_val[:, None]
        if bias is not None:
            acc = normalized * (weight[:].to(torch.float32)) + (bias[:].to(torch.float32))
        else:
            acc = normalized * (weight[:].to(torch.float32))
        out[tile_m, :] = acc.to(x.dtype)
        mean[tile_m] = mean_val
        rstd[tile_m] = rstd_val
    return out, mean, rstd
