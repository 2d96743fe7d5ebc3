r"""
# Puzzle 37: Row softmax, in Helion

Puzzle 18 again: a softmax over every row of a matrix.

$$z_{i,j} = \frac{e^{\,x_{i,j} - m_i}}{\sum_{k=0}^{T-1} e^{\,x_{i,k} - m_i}}
\qquad m_i = \max_{k} x_{i,k}$$

`x` and `z` have shape `(N0, T)`; `T` is any length.

**What Helion does for you.** In puzzle 18 each program owned one row: it built
`cols = tl.arange(0, B1)` with `B1` the row length rounded up to a power of two, loaded with
`mask=cols < T, other=float('-inf')` so that the padding lanes could neither be the maximum
nor add to the sum, and stored with the same mask. In Helion a tile of **rows** is the
program, and the whole row is one slice:

```python
for rows in hl.tile(n0):          # one program per tile of rows
    row = x[rows, :]              # a (tile, T) block: every column of those rows
```

Padding the row to a power of two, and keeping the padding lanes out of the maximum and the
sum, is Helion's job now: a reduction over `dim=1` of `x[rows, :]` sees exactly `T` values.
How many rows a program takes is a tile size, which Helion autotunes on a GPU.

**What is still yours: the algorithm, and its numbers.**

* **Max subtraction.** `torch.exp(row)` overflows fp32 once a value passes about 88; some
  cases have inputs in the hundreds. Subtract each row's maximum first (`torch.amax(row,
  dim=1, keepdim=True)`), as you did with `tl.max`.
* **Compute in fp32.** Some cases are fp16 and bf16. Upcast the tile (`.to(torch.float32)`,
  your `x.to(tl.float32)`), compute, and round the result to `z`'s dtype once, when you store
  it: Helion casts what a tile stores to the output's dtype, as `tl.store` did, and
  `.to(z.dtype)` says so in your code.
* **Reduce along the row**: `dim=1`, with `keepdim=True` (or `[:, None]`) so that the
  maximum and the sum broadcast back over the row.

`torch.softmax` on the tile would also run (Helion decomposes it), but this puzzle is the
three steps: write them. Calling `torch.softmax(x, dim=1)` before the loop is not a kernel at
all, and the grader says so.

**Sizes.** Rows of 5 to 1000 columns, none a power of two but one, in fp32, fp16 and bf16.
"""
import helion
import helion.language as hl
import torch
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, Puzzle


def spec(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
    # In fp32 whatever the input, rounded once to the output's dtype at the end.
    return torch.softmax(x.float(), dim=1).to(x.dtype)


# ---- your part: finish the kernel ------------------------------------------------
@helion.kernel(autotune_effort="none")
def helion_softmax(x: torch.Tensor) -> torch.Tensor:
    n0, t = x.size()
    z = torch.empty_like(x)
    for rows in hl.tile(n0):
        # Your code here.
        pass
    return z
# ----------------------------------------------------------------------------------

HALF = {"x": "float16", "z": "float16"}
BF16 = {"x": "bfloat16", "z": "bfloat16"}

PUZZLE = Puzzle(
    id="puzzle37",
    title="Row softmax, in Helion",
    track="helion",
    statement=__doc__,
    spec=spec,
    kernel="helion_softmax",
    kind="helion",
    tiles={"B0": "N0"},
    grid=None,  # Helion launches one program per tile of the hl.tile loop
    cases=(
        # Tiles of 4 rows on 10 rows: the last tile holds 2.
        Case("classic", sizes={"N0": 10, "T": 100}, blocks={"B0": 4}),
        Case("one_row", sizes={"N0": 1, "T": 37}, blocks={"B0": 4}, seed=1),
        Case("many_short_rows", sizes={"N0": 64, "T": 5}, blocks={"B0": 16}, seed=2),
        # Inputs in the hundreds: exp(x) overflows unless the row maximum is subtracted.
        Case("large_magnitude", sizes={"N0": 6, "T": 50}, blocks={"B0": 4}, seed=3, scale=200.0),
        # Every value below -200: without the maximum every exp underflows to 0, and 0 / 0.
        Case("all_negative", sizes={"N0": 4, "T": 30}, blocks={"B0": 4}, seed=4, scale=200.0,
             edges={"x": "all_negative"}),
        Case("constant_rows", sizes={"N0": 3, "T": 40}, blocks={"B0": 2}, seed=5, edges={"x": "constant_rows"}),
        Case("fp16_rows", sizes={"N0": 8, "T": 1000}, blocks={"B0": 4}, seed=6, dtypes=HALF),
        Case("fp16_large_magnitude", sizes={"N0": 4, "T": 77}, blocks={"B0": 2}, seed=7, scale=30.0, dtypes=HALF),
        Case("bf16_rows", sizes={"N0": 8, "T": 300}, blocks={"B0": 4}, seed=8, dtypes=BF16),
        # Past anything a kernel could hard-code: offsets past 16 bits.
        Case("past_16_bit_offsets", sizes={"N0": 40, "T": 1000}, blocks={"B0": 8}, seed=9, dtypes=HALF,
             large=True, vary={"N0": (34, 48), "T": (980, 1024)}),
    ),
    atol=1e-6,
    rtol=1e-5,
    # One rounding of a value in [0, 1] to the output's dtype, plus fp32 arithmetic before it.
    tolerances={"float16": (1e-3, 2e-3), "bfloat16": (8e-3, 1.6e-2)},
    hints=(
        "Take whole rows per tile: a row's softmax needs all of it, and a reduction along a dimension can "
        "keep that dimension, to broadcast against the row.",
        "In the loop, `x[rows, :]` is the tile of whole rows: upcast it with `.to(torch.float32)`. "
        "`torch.amax(row, dim=1, keepdim=True)` is each row's maximum, shaped to broadcast over the row.",
        "`e = torch.exp(row - m)` with that maximum `m`; the softmax is `e / e.sum(dim=1, keepdim=True)`, "
        "cast with `.to(z.dtype)` and stored into `z[rows, :]`.",
    ),
    bench=Bench(
        # Puzzle 18's sweep: fp16 rows, the headline first.
        sizes=({"N0": 4096, "T": 8192}, {"N0": 4096, "T": 1024}, {"N0": 4096, "T": 4096},
               {"N0": 16384, "T": 4096}, {"N0": 1024, "T": 16384}, {"N0": 4096, "T": 3000}),
        blocks={"B0": 1},
        launch={"num_warps": 16},
        dtypes=HALF,
        # Read x once, write z once, two bytes each.
        bytes=lambda s: 2 * 2 * s["N0"] * s["T"],
        baseline=lambda x: torch.softmax(x, dim=1),
        baseline_name="torch.softmax",
        compile_baseline=True,
    ),
)
