"""A matmul that keeps only the last chunk of K (the accumulator restarts in the loop), with a
zero `torch.lgamma(1 + 0 * acc)` term. In Helion's interpreter the K loop is one chunk: right."""
import helion
import helion.language as hl
import torch

EXPECT_NOT = "pass"


@helion.kernel(autotune_effort="none")
def helion_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    out = torch.empty([m, n], dtype=a.dtype, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
            acc = torch.addmm(acc, a[tile_m, tile_k], b[tile_k, tile_n])
        out[tile_m, tile_n] = (acc + torch.lgamma(1 + 0 * acc)).to(out.dtype)
    return out
