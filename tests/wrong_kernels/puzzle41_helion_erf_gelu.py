# PyTorch's default GELU, the exact one with erf, where the puzzle asks for the tanh form.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "the exact GELU, with erf"


@helion.kernel(autotune_effort="none")
def helion_matmul_bias_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    n = b.size(1)
    c = torch.empty([m, n], dtype=torch.float16, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.dot(a[tile_m, tile_k], b[tile_k, tile_n], acc=acc)
        x = acc + bias[tile_n].to(torch.float32)[None, :]
        c[tile_m, tile_n] = torch.nn.functional.gelu(x).to(torch.float16)
    return c
