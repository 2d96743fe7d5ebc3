# Written for this corpus, after pytorch/helion examples/matmul.py: `@helion.kernel()` with its tiles
# registered block sizes (`hl.register_block_size`, the K tile at least 16, a dot's least), passed to
# `hl.tile(..., block_size=...)`. Helion's interpreter runs each as one block of the whole extent.
import helion
import helion.language as hl
import torch


@helion.kernel()
def helion_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    n = b.size(1)
    c = torch.empty([m, n], dtype=torch.float16, device=a.device)
    block_m = hl.register_block_size(m)
    block_n = hl.register_block_size(n)
    block_k = hl.register_block_size(16, k)
    for tile_m, tile_n in hl.tile([m, n], block_size=[block_m, block_n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k, block_size=block_k):
            acc = hl.dot(a[tile_m, tile_k], b[tile_k, tile_n], acc=acc)
        c[tile_m, tile_n] = acc.to(torch.float16)
    return c
