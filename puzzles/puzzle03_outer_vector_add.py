r"""
# Puzzle 3: Outer vector add

Add two vectors "outer-product style": every element of `x` meets every element of `y`.

$$z_{j,i} = x_i + y_j \qquad i = 0, \dots, N_0 - 1, \quad j = 0, \dots, N_1 - 1$$

`x` has length `N0`, `y` has length `N1`, and `z` is an `N1 x N0` matrix stored row-major:
row `j` belongs to `y[j]`, column `i` to `x[i]`, and element `(j, i)` sits at offset
`j * N0 + i`. Note that `N0` and `N1` can differ.

A single program is launched (grid `(1,)`) and it covers the whole output: `B0 == N0` and
`B1 == N1` in every case, so no mask is needed.

The new tool for this puzzle is **broadcasting to 2-D**: indexing a 1-D block with
`[None, :]` turns it into a `1 x B` row, and `[:, None]` into a `B x 1` column. Combining a
row with a column (`+`, `*`, ...) gives a full 2-D block. This works for values and for
offsets alike.

**Sizes.** One case is 256 by 256: offsets past 32767 do not fit 16 bits.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Puzzle, seeds


def spec(x: Float32[Tensor, "N0"], y: Float32[Tensor, "N1"]) -> Float32[Tensor, "N1 N0"]:
    return x[None, :] + y[:, None]


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def add_vec_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle03",
    title="Outer vector add",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="add_vec_kernel",
    grid=lambda s: (1,),
    cases=(
        *seeds(Case("classic", sizes={"N0": 32, "N1": 32}, blocks={"B0": 32, "B1": 32}), 1, 2),
        Case("wide", sizes={"N0": 64, "N1": 16}, blocks={"B0": 64, "B1": 16}, seed=3),
        Case("tall", sizes={"N0": 8, "N1": 128}, blocks={"B0": 8, "B1": 128}, seed=4),
        Case("single_column", sizes={"N0": 1, "N1": 32}, blocks={"B0": 1, "B1": 32}, seed=5),
        # Past anything a kernel could hard-code: offsets past 16 bits (a 256 x 256 output).
        Case("past_16_bit_offsets", sizes={"N0": 256, "N1": 256}, blocks={"B0": 256, "B1": 256}, seed=6,
             large=True),
    ),
    atol=1e-6,
    rtol=1e-6,
    hints=(
        "Load each vector once, as a block, and let broadcasting build the tile: a column of `y` against a "
        "row of `x` gives every pair at once.",
        "Load `x` with `tl.arange(0, B0)` and `y` with `tl.arange(0, B1)`; then "
        "`x[None, :] + y[:, None]` is a `B1 x B0` block shaped like `z`.",
        "Build the output offsets the same way: `rows[:, None] * N0 + cols[None, :]`, where "
        "rows index `y` and columns index `x`.",
    ),
    look_alikes=(
        LookAlike("the output stored transposed (an N0 x N1 matrix, x along the rows)",
                  lambda x, y: (x[:, None] + y[None, :]).reshape(len(y), len(x)),
                  "`z` has N1 rows, one per element of `y`, and N0 columns, one per element of `x`: "
                  "compute `x[None, :] + y[:, None]` and store element (j, i) at offset `j * N0 + i`"),
    ),
)
