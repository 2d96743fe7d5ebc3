r"""
# Puzzle 2: Constant add, blocked

Add the constant 10 to every element of a vector, as in puzzle 1, but now the vector is
longer than one block.

$$z_i = x_i + 10 \qquad i = 0, \dots, N_0 - 1$$

`x` and `z` have length `N0`. The grid is one-dimensional with `cdiv(N0, B0)` programs;
program `p` (its `tl.program_id(0)`) handles elements `p * B0` up to `p * B0 + B0 - 1`.
`N0` need not be a multiple of `B0`, so the last program's block can stick out past the
end of the vectors.

The new tool for this puzzle is the **mask**:

* a comparison such as `offsets < N0` gives a block of booleans;
* `tl.load(ptrs, mask=m)` only reads where `m` is true (the other lanes get `other`,
  0 by default), and `tl.store(ptrs, values, mask=m)` only writes where `m` is true.

Every load and every store that could fall outside a tensor must be masked.

**Sizes.** One case has 40000 elements (a batch draws its sizes within a range, so fit
nothing to the sizes you see): offsets past 32767 do not fit 16 bits.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, Puzzle, Variant, cdiv, seeds

# The constant added: each student of a class graded with a secret gets their own (not puzzle 1's).
ADD = Variant("ADD", choices=tuple(float(k) for k in range(3, 20)), default=10.0, what="the constant added",
              stated=("Add the constant {{ADD}} to", r"x_i + {{ADD}} \qquad"))


def spec(x: Float32[Tensor, "N0"], *, ADD: float) -> Float32[Tensor, "N0"]:
    return x + ADD


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle02",
    title="Constant add, blocked",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="add_mask2_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]),),
    cases=(
        *seeds(Case("classic", sizes={"N0": 200}, blocks={"B0": 32}), 1, 2),
        Case("exact_multiple", sizes={"N0": 256}, blocks={"B0": 64}, seed=3),
        Case("tail_of_one", sizes={"N0": 129}, blocks={"B0": 64}, seed=4),
        Case("block_larger_than_vector", sizes={"N0": 20}, blocks={"B0": 64}, seed=5),
        Case("many_small_blocks", sizes={"N0": 77}, blocks={"B0": 8}, seed=6),
        Case("single_element", sizes={"N0": 1}, blocks={"B0": 16}, seed=7),
        # Past anything a kernel could hard-code: offsets past 16 bits, hundreds of programs.
        Case("past_16_bit_offsets", sizes={"N0": 40000}, blocks={"B0": 1024}, seed=8, large=True,
             vary={"N0": (33000, 50000)}),
    ),
    atol=1e-6,
    rtol=1e-6,
    variants=(ADD,),
    hints=(
        "Each program owns its own block of `B0` elements, found from its program id; the last block runs "
        "past `N0`, so some of its lanes must neither load nor store.",
        "Start the block at `tl.program_id(0) * B0` and add `tl.arange(0, B0)` to get "
        "this program's offsets.",
        "Compute `mask = offsets < N0` once and pass it to both `tl.load` and `tl.store`.",
    ),
)
