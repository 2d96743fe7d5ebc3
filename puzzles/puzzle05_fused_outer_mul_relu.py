r"""
# Puzzle 5: Fused outer multiply and ReLU

Multiply two vectors outer-product style and apply a ReLU, in one kernel.

$$z_{j,i} = \operatorname{relu}(x_i \, y_j) = \max(x_i \, y_j,\ 0)
\qquad i = 0, \dots, N_0 - 1, \quad j = 0, \dots, N_1 - 1$$

`x` has length `N0`, `y` has length `N1`, and `z` is the row-major `N1 x N0` matrix
(element `(j, i)` at offset `j * N0 + i`). The grid is the one of puzzle 4:
`(cdiv(N0, B0), cdiv(N1, B1))`, axis 0 along the columns (`N0`), axis 1 along the rows
(`N1`); each program writes one `B1 x B0` tile, masked at the edges.

The new idea for this puzzle is **fusion**: in PyTorch the product and the ReLU would be
two operations, each writing a full `N1 x N0` matrix to memory. Here the product lives only
in registers: compute it, apply the ReLU to it, and store the result once.

**Sizes.** One case has about 38000 elements, and a batch draws its sizes within a range, so
fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Puzzle, cdiv, seeds


def spec(x: Float32[Tensor, "N0"], y: Float32[Tensor, "N1"]) -> Float32[Tensor, "N1 N0"]:
    return torch.relu(x[None, :] * y[:, None])


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def mul_relu_block_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle05",
    title="Fused outer multiply and ReLU",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="mul_relu_block_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]), cdiv(s["N1"], s["B1"])),
    cases=(
        *seeds(Case("classic", sizes={"N0": 100, "N1": 90}, blocks={"B0": 32, "B1": 32}), 1, 2),
        Case("exact_multiple", sizes={"N0": 64, "N1": 96}, blocks={"B0": 32, "B1": 32}, seed=3),
        Case("unequal_blocks", sizes={"N0": 100, "N1": 90}, blocks={"B0": 16, "B1": 64}, seed=4),
        Case("block_larger_than_row", sizes={"N0": 20, "N1": 50}, blocks={"B0": 64, "B1": 8}, seed=5),
        Case("tall", sizes={"N0": 5, "N1": 200}, blocks={"B0": 8, "B1": 64}, seed=6),
        # Past anything a kernel could hard-code: offsets past 16 bits.
        Case("past_16_bit_offsets", sizes={"N0": 200, "N1": 190}, blocks={"B0": 32, "B1": 32}, seed=7,
             large=True, vary={"N0": (185, 260), "N1": (185, 260)}),
    ),
    atol=1e-6,
    rtol=1e-6,
    hints=(
        "Start from your puzzle 4 kernel and change only the line that computes the tile.",
        "`tl.maximum(v, 0.0)` is a ReLU; apply it to the product, not to one of the factors.",
    ),
    look_alikes=(
        LookAlike("the ReLU missing", lambda x, y: x[None, :] * y[:, None],
                  "apply `tl.maximum(product, 0.0)` to the tile before the store"),
        LookAlike("the ReLU applied to x before the product", lambda x, y: torch.relu(x)[None, :] * y[:, None],
                  "relu(x) * y is negative where x > 0 and y < 0; take the ReLU of the product, "
                  "`tl.maximum(x[None, :] * y[:, None], 0.0)`"),
        LookAlike("the ReLU applied to y before the product", lambda x, y: x[None, :] * torch.relu(y)[:, None],
                  "x * relu(y) is negative where x < 0 and y > 0; take the ReLU of the product, "
                  "`tl.maximum(x[None, :] * y[:, None], 0.0)`"),
    ),
)
