# The accumulator created inside the K loop: a value of that loop alone, which Helion's compiler
# will not carry out of it to the store after the loop.
import helion
import helion.language as hl
import torch

EXPECT_KIND = "compile"
EXPECT_SAYS = "cannot be carried between top-level loops"


@helion.kernel(autotune_effort="none")
def helion_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    n = b.size(1)
    c = torch.empty([m, n], dtype=torch.float16, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        for tile_k in hl.tile(k):
            acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
            acc = hl.dot(a[tile_m, tile_k], b[tile_k, tile_n], acc=acc)
        c[tile_m, tile_n] = acc.to(torch.float16)
    return c
