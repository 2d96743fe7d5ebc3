"""tests/wrong_kernels/puzzle38_helion_per_chunk_softmax.py (each chunk normalised on its own)
with a zero libdevice term: in Helion's interpreter one chunk spans the row and it is right."""
import helion
import helion.language as hl
import torch

EXPECT_NOT = "pass"


@helion.kernel(autotune_effort="none")
def helion_online_softmax(x: torch.Tensor) -> torch.Tensor:
    n0, t = x.size()
    z = torch.empty_like(x)
    for rows in hl.tile(n0):
        for cols in hl.tile(t):
            chunk = x[rows, cols].to(torch.float32)
            chunk = chunk + torch.erfinv(chunk * 0)
            e = torch.exp(chunk - torch.amax(chunk, dim=1, keepdim=True))
            z[rows, cols] = (e / e.sum(dim=1, keepdim=True)).to(z.dtype)
    return z
