# An fp16 accumulator: the running sum is rounded to 11 significant bits after every chunk.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_CASE = "long_k"
EXPECT_SAYS = "your accumulator is fp16"


@helion.kernel(autotune_effort="none")
def helion_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    n = b.size(1)
    c = torch.empty([m, n], dtype=torch.float16, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float16)
        for tile_k in hl.tile(k):
            acc = hl.dot(a[tile_m, tile_k], b[tile_k, tile_n], acc=acc)
        c[tile_m, tile_n] = acc
    return c
