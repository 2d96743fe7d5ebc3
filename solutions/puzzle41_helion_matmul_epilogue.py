import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_matmul_bias_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    n = b.size(1)
    c = torch.empty([m, n], dtype=torch.float16, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.dot(a[tile_m, tile_k], b[tile_k, tile_n], acc=acc)
        # The epilogue, on the finished tile: bias per column, then the tanh GELU.
        x = acc + bias[tile_n].to(torch.float32)[None, :]
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        c[tile_m, tile_n] = (0.5 * x * (1.0 + torch.tanh(u))).to(torch.float16)
    return c
