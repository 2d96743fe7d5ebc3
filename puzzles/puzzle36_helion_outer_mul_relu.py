r"""
# Puzzle 36: Fused outer multiply and ReLU, in Helion

Puzzle 5 again: multiply two vectors outer-product style and apply a ReLU, in one kernel.

$$z_{j,i} = \operatorname{relu}(x_i \, y_j) = \max(x_i \, y_j,\ 0)
\qquad i = 0, \dots, N_0 - 1, \quad j = 0, \dots, N_1 - 1$$

`x` has length `N0`, `y` has length `N1`, and `z` is the `N1 x N0` matrix.

**What Helion does for you.** In puzzle 5 you launched a 2-D grid of
`(cdiv(N0, B0), cdiv(N1, B1))` programs, built two ranges of offsets, broadcast them into a
`B1 x B0` block of addresses (`offs_1[:, None] * N0 + offs_0[None, :]`), and masked the
tile with `(offs_1 < N1)[:, None] & (offs_0 < N0)[None, :]`. Here one loop does all of it:

```python
for rows, cols in hl.tile([n1, n0]):   # one program per (rows, cols) tile of z
    ...                                # z[rows, cols], x[cols], y[rows] are tiles
```

`hl.tile` over two sizes is the 2-D grid; `rows` and `cols` index tensors directly, the
addresses and the masks of the ragged edge tiles are Helion's, and so is the choice of the
tile sizes (autotuned on a GPU; the grader sets them per case).

**What is still yours.** The broadcast and the fusion. `x[cols]` is a vector along the
columns and `y[rows]` one along the rows: `y[rows, None] * x[None, cols]` makes the tile, as
`x[None, :] * y[:, None]` did in puzzle 5. Apply the ReLU to the product while it is still a
tile in registers (`torch.relu`, or `torch.clamp_min(p, 0)`), and store it once: that is the
fusion, the product never goes to memory. Which size goes with which axis is yours too:
`z` is `N1 x N0`, rows along `y`.

Computing `torch.relu(x[None, :] * y[:, None])` before the loop is the spec, run by PyTorch
on the whole tensors: not a kernel, and the grader says so.

**Sizes.** Tails in both directions (no size a multiple of its tile), a tall thin case, and
one case past 16-bit offsets.
"""
import helion
import helion.language as hl
import torch
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Puzzle, seeds


def spec(x: Float32[Tensor, "N0"], y: Float32[Tensor, "N1"]) -> Float32[Tensor, "N1 N0"]:
    return torch.relu(x[None, :] * y[:, None])


# ---- your part: finish the kernel ------------------------------------------------
@helion.kernel(autotune_effort="none")
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        # Your code here.
        pass
    return z
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle36",
    title="Fused outer multiply and ReLU, in Helion",
    track="helion",
    statement=__doc__,
    spec=spec,
    kernel="helion_mul_relu",
    kind="helion",
    tiles={"B1": "N1", "B0": "N0"},
    grid=None,  # Helion launches one program per tile of the hl.tile loop
    cases=(
        # Tiles of 16 x 32 on 90 x 100: a ragged last tile in both directions.
        *seeds(Case("classic", sizes={"N0": 100, "N1": 90}, blocks={"B1": 16, "B0": 32}), 1),
        Case("exact_multiple", sizes={"N0": 64, "N1": 48}, blocks={"B1": 16, "B0": 32}, seed=2),
        Case("tile_larger_than_row", sizes={"N0": 20, "N1": 50}, blocks={"B1": 8, "B0": 64}, seed=3),
        Case("tall", sizes={"N0": 5, "N1": 200}, blocks={"B1": 64, "B0": 8}, seed=4),
        # Past anything a kernel could hard-code: offsets past 16 bits.
        Case("past_16_bit_offsets", sizes={"N0": 200, "N1": 190}, blocks={"B1": 32, "B0": 32}, seed=5,
             large=True, vary={"N0": (185, 260), "N1": (185, 260)}),
    ),
    atol=1e-6,
    rtol=1e-6,
    hints=(
        "The tile of `z` is a tile of rows by a tile of columns: broadcast one vector's tile against the "
        "other's, apply the ReLU and store, all inside the loop.",
        "The tile of z is `z[rows, cols]`; its factors are `y[rows]` (one value per row) and "
        "`x[cols]` (one per column). Broadcast them: `y[rows, None] * x[None, cols]`.",
        "Apply `torch.relu` to that product tile, inside the loop, and store the result into "
        "`z[rows, cols]`: one store, the product never written to memory on its own.",
    ),
    look_alikes=(
        LookAlike("the ReLU missing", lambda x, y: x[None, :] * y[:, None],
                  "apply `torch.relu` to the product tile before storing it in `z[rows, cols]`"),
        LookAlike("the ReLU applied to x before the product", lambda x, y: torch.relu(x)[None, :] * y[:, None],
                  "relu(x) * y is negative where x > 0 and y < 0; take the ReLU of the product, "
                  "`torch.relu(y[rows, None] * x[None, cols])`"),
        LookAlike("the ReLU applied to y before the product", lambda x, y: x[None, :] * torch.relu(y)[:, None],
                  "x * relu(y) is negative where x < 0 and y > 0; take the ReLU of the product, "
                  "`torch.relu(y[rows, None] * x[None, cols])`"),
    ),
)
