r"""
# Puzzle 4: Outer vector add, blocked

The outer add of puzzle 3, now on a grid of programs.

$$z_{j,i} = x_i + y_j \qquad i = 0, \dots, N_0 - 1, \quad j = 0, \dots, N_1 - 1$$

`x` has length `N0`, `y` has length `N1`, and `z` is the row-major `N1 x N0` matrix
(element `(j, i)` at offset `j * N0 + i`).

The grid is two-dimensional: `(cdiv(N0, B0), cdiv(N1, B1))`. The program with
`tl.program_id(0) == p` and `tl.program_id(1) == q` computes the `B1 x B0` tile of `z` made
of columns `p * B0` to `p * B0 + B0 - 1` and rows `q * B1` to `q * B1 + B1 - 1`. So axis 0
of the grid runs along `N0` (the columns) and axis 1 along `N1` (the rows). Neither size has
to be a multiple of its block, so tiles on the right and bottom edges need masks.

The new tool for this puzzle is **`tl.program_id(1)`**: a program's index along the
second axis of the grid.

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
    return x[None, :] + y[:, None]


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def add_vec_block_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle04",
    title="Outer vector add, blocked",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="add_vec_block_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]), cdiv(s["N1"], s["B1"])),
    cases=(
        *seeds(Case("classic", sizes={"N0": 100, "N1": 90}, blocks={"B0": 32, "B1": 32}), 1, 2),
        Case("exact_multiple", sizes={"N0": 64, "N1": 96}, blocks={"B0": 32, "B1": 32}, seed=3),
        Case("unequal_blocks", sizes={"N0": 100, "N1": 90}, blocks={"B0": 64, "B1": 16}, seed=4),
        Case("block_larger_than_row", sizes={"N0": 20, "N1": 50}, blocks={"B0": 64, "B1": 8}, seed=5),
        Case("tall", sizes={"N0": 5, "N1": 200}, blocks={"B0": 8, "B1": 64}, seed=6),
        Case("single_row", sizes={"N0": 70, "N1": 1}, blocks={"B0": 32, "B1": 4}, seed=7),
        # Past anything a kernel could hard-code: offsets past 16 bits.
        Case("past_16_bit_offsets", sizes={"N0": 200, "N1": 190}, blocks={"B0": 32, "B1": 32}, seed=8,
             large=True, vary={"N0": (185, 260), "N1": (185, 260)}),
    ),
    atol=1e-6,
    rtol=1e-6,
    hints=(
        "Puzzle 3 over a 2-D grid of programs: `tl.program_id` along axis 0 picks a block of columns, along "
        "axis 1 a block of rows, and each vector, like the tile, needs a mask of its own.",
        "Columns of the tile: `tl.program_id(0) * B0 + tl.arange(0, B0)`; rows: "
        "`tl.program_id(1) * B1 + tl.arange(0, B1)`. Mask each vector load with its own bound.",
        "The store needs a 2-D mask: `(rows < N1)[:, None] & (cols < N0)[None, :]`.",
    ),
    look_alikes=(
        LookAlike("z's strides swapped (column-major: rows and columns exchanged)",
                  lambda x, y: (x[:, None] + y[None, :]).reshape(len(y), len(x)),
                  "`z` is row-major, so row j (from `y`, `tl.program_id(1)`) has stride N0 and column i "
                  "(from `x`, `tl.program_id(0)`) stride 1: store at `rows[:, None] * N0 + cols[None, :]`"),
    ),
)
