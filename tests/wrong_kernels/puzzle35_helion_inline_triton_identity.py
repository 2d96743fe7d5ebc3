"""A difference passed through an identity `hl.inline_triton`: Helion's interpreter has no
reference for inline Triton, but its Triton runs tile by tile in Triton's interpreter, so the
wrong values are graded as wrong, not left undecided."""
import helion
import helion.language as hl
import torch

EXPECT_KIND = "mismatch"
EXPECT_SAYS = "as Helion lowered it to Triton, run tile by tile in Triton's interpreter"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        s = x[tile] - y[tile]
        z[tile] = hl.inline_triton("{0}", args=(s,), output_like=s)
    return z
