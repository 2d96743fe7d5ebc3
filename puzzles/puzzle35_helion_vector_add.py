r"""
# Puzzle 35: Vector add, in Helion

Add two vectors of the same length:

$$z_i = x_i + y_i \qquad i = 0, \dots, N_0 - 1$$

This is puzzle 2 again, written in **Helion**, PyTorch's kernel language, which lowers to
Triton. In puzzle 2 you computed `pid * B0 + tl.arange(0, B0)`, built `offsets < N0`, and
passed the mask to every load and store; you also picked `B0` and the grid. In Helion:

* the kernel is an ordinary PyTorch function under `@helion.kernel`: it takes the tensors,
  allocates its output on the host (`torch.empty_like(x)`) and returns it;
* `for tile in hl.tile(n):` is the grid. Each iteration is one program, and `tile` is its
  slice of `0, ..., n - 1`; `x[tile]` loads it and `z[tile] = ...` stores it;
* Helion computes the offsets, masks the last, partial tile, and picks the tile size (or
  autotunes it on a GPU).

What is still yours: which loop covers which dimension, and what each tile computes. Work
that is not inside an `hl.tile` loop runs as whole-tensor PyTorch on the host, not in your
kernel: the grader reports it as computed with PyTorch, with its line.

**How it is graded.** On a laptop the kernel runs in Helion's interpreter
(`HELION_INTERPRET=1`), tile by tile as PyTorch on the CPU; Helion's compiler also lowers
it to Triton, with each case's tile size `B0`, so `python -m grader puzzle35 --verbose`
shows the Triton kernel yours became (compare it with your puzzle 2). On a GPU that Triton
kernel is what runs.

**Sizes.** One case has 40000 elements: offsets past 32767 do not fit 16 bits.
"""
import helion
import helion.language as hl
import torch
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, Puzzle, seeds


def spec(x: Float32[Tensor, "N0"], y: Float32[Tensor, "N0"]) -> Float32[Tensor, "N0"]:
    return x + y


# ---- your part: finish the kernel ------------------------------------------------
@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        # Your code here.
        pass
    return z
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle35",
    title="Vector add, in Helion",
    track="helion",
    statement=__doc__,
    spec=spec,
    kernel="helion_add",
    kind="helion",
    tiles={"B0": "N0"},
    grid=None,  # Helion launches one program per tile of the hl.tile loop
    cases=(
        *seeds(Case("classic", sizes={"N0": 200}, blocks={"B0": 32}), 1),
        Case("exact_multiple", sizes={"N0": 256}, blocks={"B0": 64}, seed=2),
        Case("tail_of_one", sizes={"N0": 129}, blocks={"B0": 64}, seed=3),
        Case("tile_larger_than_vector", sizes={"N0": 20}, blocks={"B0": 64}, seed=4),
        Case("single_element", sizes={"N0": 1}, blocks={"B0": 16}, seed=5),
        # Past anything a kernel could hard-code: offsets past 16 bits, hundreds of tiles.
        Case("past_16_bit_offsets", sizes={"N0": 40000}, blocks={"B0": 1024}, seed=6, large=True,
             vary={"N0": (33000, 50000)}),
    ),
    atol=1e-6,
    rtol=1e-6,
    # --bench on a GPU: reads x and y, writes z.
    bench=Bench(sizes=({"N0": 1 << 24}, {"N0": 1 << 20}, {"N0": 1 << 26}), blocks={"B0": 1024},
                bytes=lambda s: 3 * 4 * s["N0"], baseline=lambda x, y: x + y, baseline_name="torch.add"),
    hints=(
        "In Helion, `hl.tile` is the grid and the tile is the offsets: index the tensors with it inside the "
        "loop, and Helion masks the last tile.",
        "Inside the loop, index each tensor with the tile (`x[tile]`), the way `offsets` indexed "
        "the pointers in puzzle 2, and store the sum to `z[tile]`: Helion adds the mask.",
        "Keep the work inside `for tile in hl.tile(...)`: a line like `z = x + y` above the loop "
        "is PyTorch running on the whole tensors, not your kernel.",
    ),
)
