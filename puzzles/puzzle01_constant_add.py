r"""
# Puzzle 1: Constant add

Add the constant 10 to every element of a vector.

$$z_i = x_i + 10 \qquad i = 0, \dots, N_0 - 1$$

One program is launched, and its block is exactly as long as the vector:
`B0 == N0` in every case, so no mask is needed yet.

The tools for this puzzle:

* `tl.arange(0, B0)` gives the offsets `0, 1, ..., B0 - 1` as a block of values.
* `x_ptr + offsets` is a block of pointers; `tl.load` reads them and `tl.store` writes them.

**Sizes.** One case is a vector of 65536 elements, in one block: offsets past 32767 do not
fit 16 bits.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, Puzzle, Variant

# The constant added: each student of a class graded with a secret gets their own.
ADD = Variant("ADD", choices=tuple(float(k) for k in range(3, 20)), default=10.0, what="the constant added",
              stated=("Add the constant {{ADD}} to", r"x_i + {{ADD}} \qquad"))


def spec(x: Float32[Tensor, "N0"], *, ADD: float) -> Float32[Tensor, "N0"]:
    return x + ADD


def _hints(add: float) -> tuple[str, ...]:
    return ("One program covers the whole vector: a block of `B0` lane indices addresses every element, "
            "to load from `x_ptr` and to store to `z_ptr`.",
            f"Build the offsets with `tl.arange(0, B0)`, load `x_ptr + offsets`, add {add:g}, "
            "and store to `z_ptr + offsets`.")


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle01",
    title="Constant add",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="add_kernel",
    grid=lambda s: (1,),
    cases=(
        Case("classic", sizes={"N0": 32}, blocks={"B0": 32}),
        Case("classic", sizes={"N0": 32}, blocks={"B0": 32}, seed=1),
        Case("wider", sizes={"N0": 128}, blocks={"B0": 128}, seed=2),
        Case("narrow", sizes={"N0": 8}, blocks={"B0": 8}, seed=3),
        # Past anything a kernel could hard-code: offsets past 16 bits (more than 32768 elements).
        Case("past_16_bit_offsets", sizes={"N0": 65536}, blocks={"B0": 65536}, seed=4, large=True),
    ),
    hints=_hints(ADD.default),
    variants=(ADD,),
    rebuild=lambda v: {"hints": _hints(v["ADD"])},
)
