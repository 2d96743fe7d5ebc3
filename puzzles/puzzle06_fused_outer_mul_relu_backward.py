r"""
# Puzzle 6: Fused multiply and ReLU, backward

The backward pass of a fused multiply-and-ReLU. In the forward pass, every row `j` of a
matrix `x` is scaled by `y[j]` and a ReLU is applied:

$$z_{j,i} = \operatorname{relu}(x_{j,i} \, y_j)$$

Given the gradient `dz` of some loss with respect to `z`, compute its gradient with respect
to `x`. The ReLU passes the gradient through only where its input was positive, and the
product scales it by `y[j]`:

$$dx_{j,i} = dz_{j,i} \; y_j \; \mathbb{1}\left[x_{j,i} \, y_j > 0\right]
\qquad i = 0, \dots, N_0 - 1, \quad j = 0, \dots, N_1 - 1$$

`x`, `dz` and the output `dx` are row-major `N1 x N0` matrices (element `(j, i)` at offset
`j * N0 + i`); `y` is a vector of length `N1`. The grid is the one of puzzle 4:
`(cdiv(N0, B0), cdiv(N1, B1))`, axis 0 along the columns (`N0`), axis 1 along the rows
(`N1`); each program writes one `B1 x B0` tile of `dx`, masked at the edges.

The new idea for this puzzle is the **backward pass**: a fused kernel recomputes the
forward quantity it needs (here, the sign of `x * y`) instead of reading it from memory.

**Sizes.** One case has about 38000 elements, and a batch draws its sizes within a range, so
fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Puzzle, cdiv, seeds


def spec(
    x: Float32[Tensor, "N1 N0"], y: Float32[Tensor, "N1"], dz: Float32[Tensor, "N1 N0"]
) -> Float32[Tensor, "N1 N0"]:
    with torch.enable_grad():
        x = x.detach().clone().requires_grad_(True)
        z = torch.relu(x * y.detach()[:, None])
        z.backward(dz.detach())
    return x.grad


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def mul_relu_block_back_kernel(x_ptr, y_ptr, dz_ptr, dx_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle06",
    title="Fused multiply and ReLU, backward",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="mul_relu_block_back_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]), cdiv(s["N1"], s["B1"])),
    output="dx",
    cases=(
        *seeds(Case("classic", sizes={"N0": 100, "N1": 90}, blocks={"B0": 32, "B1": 32}), 1, 2),
        Case("exact_multiple", sizes={"N0": 64, "N1": 96}, blocks={"B0": 32, "B1": 32}, seed=3),
        Case("unequal_blocks", sizes={"N0": 100, "N1": 90}, blocks={"B0": 64, "B1": 16}, seed=4),
        Case("block_larger_than_row", sizes={"N0": 20, "N1": 50}, blocks={"B0": 64, "B1": 8}, seed=5),
        Case("tall", sizes={"N0": 5, "N1": 200}, blocks={"B0": 8, "B1": 64}, seed=6),
        # Every third x is exactly 0, so x * y is too: relu'(0) is 0, a gate `>=` lets dz * y through.
        Case("exact_zeros", sizes={"N0": 40, "N1": 30}, blocks={"B0": 32, "B1": 16}, seed=7, edges={"x": "zeros"}),
        # Past anything a kernel could hard-code: offsets past 16 bits, hundreds of rows.
        Case("past_16_bit_offsets", sizes={"N0": 200, "N1": 190}, blocks={"B0": 32, "B1": 32}, seed=8,
             edges={"x": "zeros"}, large=True, vary={"N0": (185, 260), "N1": (185, 260)}),
    ),
    atol=1e-6,
    rtol=1e-6,
    hints=(
        "The ReLU lets the gradient through only where its input, the product of `x` and `y`, was positive: "
        "recompute that product here (the forward saved nothing), and use it to gate `dz`.",
        "`x` and `dz` are tiles like `dx`: load both with the same 2-D offsets and mask; "
        "`y` is a vector, so load it per row and broadcast it with `[:, None]`.",
        "`tl.where(x * y > 0, dz * y, 0.0)` applies the ReLU's gate.",
    ),
    look_alikes=(
        LookAlike("the ReLU's gate missing (dx = dz * y everywhere)", lambda x, y, dz: dz * y[:, None],
                  "the gradient flows only where the forward's product was positive: "
                  "`tl.where(x * y > 0, dz * y, 0.0)`"),
        LookAlike("the gate taken from x alone (x > 0 instead of x * y > 0)",
                  lambda x, y, dz: torch.where(x > 0, dz * y[:, None], 0.0),
                  "the ReLU's input was x * y, so where y < 0 the sign flips: gate on `x * y > 0`"),
        LookAlike("the gate taken with >= (relu'(0) taken as 1)",
                  lambda x, y, dz: torch.where(x * y[:, None] >= 0, dz * y[:, None], 0.0),
                  "where x * y is exactly 0 the ReLU's gradient is 0: gate on `x * y > 0`, not `>= 0`"),
        LookAlike("the gate taken from x's first row (x read as a vector)",
                  lambda x, y, dz: torch.where(x[:1] * y[:, None] > 0, dz * y[:, None], 0.0),
                  "`x` is an N1 x N0 matrix like `dz`: load it with the same 2-D offsets and mask"),
    ),
)
