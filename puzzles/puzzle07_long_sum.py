r"""
# Puzzle 7: Long sum

Sum every row of a matrix whose rows are too long for one block.

$$z_i = \sum_{j=0}^{T-1} x_{i,j} \qquad i = 0, \dots, N_0 - 1$$

`x` has shape `(N0, T)`, stored row by row (element `(i, j)` is at offset `i * T + j`);
`z` has length `N0`. The grid is one-dimensional with `cdiv(N0, B0)` programs; program
`p` owns rows `p * B0` up to `p * B0 + B0 - 1` (the last program's rows may run past
`N0`). A row has `T` elements, and `T` is usually much larger than `B1`.

The kernel also receives `N1`; it always equals `T` and is only there so that the
signature matches the classic one. Use `T`.

The new idea is the **loop over a long dimension**: a block has a fixed, power-of-two
size known at compile time, while `T` is only known at run time. So each program walks
along its rows in chunks of `B1` columns with an ordinary Python `for` loop (Triton
compiles it to a real loop), loads one `(B0, B1)` tile per step and adds it into an
accumulator that lives across iterations. The last chunk may stick out past the end of
the row, so it needs a mask on the column index as well as on the row index.

**Sizes.** One case has rows of 1100 elements, over 17 chunks, and a batch draws its sizes
within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Puzzle, cdiv, seeds


def spec(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0"]:
    return x.sum(dim=1)


def _first_chunk(x, *, sizes):  # a look-alike: no loop over the chunks
    return x[:, :sizes["B1"]].sum(dim=1)


def _last_chunk(x, *, sizes):  # a look-alike: `acc = tl.sum(...)` inside the loop, not `acc +=`
    return x[:, (sizes["T"] - 1) // sizes["B1"] * sizes["B1"]:].sum(dim=1)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def sum_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle07",
    title="Long sum",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="sum_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]),),
    derive=lambda s: {"N1": s["T"]},  # N1 is T under its classic name, wherever T is drawn
    cases=(
        *seeds(Case("classic", sizes={"N0": 4, "N1": 200, "T": 200}, blocks={"B0": 1, "B1": 32}), 1, 2),
        Case("row_blocks_with_tails", sizes={"N0": 7, "N1": 100, "T": 100}, blocks={"B0": 4, "B1": 16}, seed=3),
        Case("exact_multiple", sizes={"N0": 8, "N1": 128, "T": 128}, blocks={"B0": 2, "B1": 64}, seed=4),
        Case("row_shorter_than_block", sizes={"N0": 3, "N1": 20, "T": 20}, blocks={"B0": 2, "B1": 32}, seed=5),
        Case("tail_of_one", sizes={"N0": 2, "N1": 65, "T": 65}, blocks={"B0": 1, "B1": 32}, seed=6),
        # Past anything a kernel could hard-code: rows longer than 1024 (over 30 chunks), offsets past 16 bits.
        Case("many_chunks", sizes={"N0": 30, "N1": 1100, "T": 1100}, blocks={"B0": 1, "B1": 64}, seed=7,
             large=True, vary={"N0": (30, 40), "T": (1100, 1400)}),
    ),
    # fp32 throughout; the kernel adds in a different order than torch, so allow rounding.
    atol=1e-5,
    rtol=1e-4,
    hints=(
        "A row is longer than a block: walk it in chunks of `B1` columns with a loop, adding each chunk's row "
        "sums into an accumulator that lives across the iterations.",
        "Keep a `tl.zeros([B0], dtype=tl.float32)` accumulator, then "
        "`for start in range(0, T, B1):` load the tile at rows `p * B0 + tl.arange(0, B0)` "
        "and columns `start + tl.arange(0, B1)`, and add `tl.sum(tile, axis=1)` to it.",
        "The tile's mask is `(rows < N0)[:, None] & (cols < T)[None, :]`; masked lanes load "
        "as 0, which does not change a sum. Store the accumulator once, after the loop.",
    ),
    look_alikes=(
        LookAlike("a sum of the first chunk only (B1 columns per row)", _first_chunk,
                  "loop over the row, `for start in range(0, T, B1):`, adding each chunk's "
                  "`tl.sum(tile, axis=1)` to the accumulator"),
        LookAlike("a sum of the last chunk only (the accumulator overwritten in the loop)", _last_chunk,
                  "add to the accumulator, `acc += tl.sum(tile, axis=1)`: `acc = ...` keeps only the last chunk"),
    ),
)
