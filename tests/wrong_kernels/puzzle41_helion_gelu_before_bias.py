# The GELU applied to the product, and the bias added after it.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "the activation before the bias"


@helion.kernel(autotune_effort="none")
def helion_matmul_bias_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    n = b.size(1)
    c = torch.empty([m, n], dtype=torch.float16, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.dot(a[tile_m, tile_k], b[tile_k, tile_n], acc=acc)
        u = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        y = 0.5 * acc * (1.0 + torch.tanh(u)) + bias[tile_n].to(torch.float32)[None, :]
        c[tile_m, tile_n] = y.to(torch.float16)
    return c
