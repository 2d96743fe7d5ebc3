r"""
# Puzzle 38: Online softmax over long rows, in Helion

Puzzle 19 again: a softmax over rows too long to hold in one tile.

$$z_{i,j} = \frac{e^{\,x_{i,j} - m_i}}{\sum_{k=0}^{T-1} e^{\,x_{i,k} - m_i}}
\qquad m_i = \max_{k} x_{i,k}$$

`x` and `z` have shape `(N0, T)`, `T` any length, usually many tiles long.

**What Helion does for you.** In puzzle 19 program `i` owned row `i` and walked it with
`for start in range(0, T, B1)`, building `cols = start + tl.arange(0, B1)` and loading the
last chunk with `mask=cols < T, other=float('-inf')`. In Helion both loops are tiles, one
inside the other:

```python
for rows in hl.tile(n0):              # one program per tile of rows
    ...                               # per-row state lives here: a vector over `rows`
    for cols in hl.tile(t):           # a loop inside the program, chunk by chunk
        chunk = x[rows, cols]         # a (rows, cols) tile; the tail is masked for you
```

An outer `hl.tile` is the grid; an `hl.tile` **inside** it is a loop that each program runs,
your `range(0, T, B1)`. The chunk's tail and its padding lanes are Helion's: a reduction over
`dim=1` of `x[rows, cols]` sees only real columns. Each `hl.tile` has its own tile size, set
by the grader per case (autotuned on a GPU); the cases make rows many chunks long.

**What is still yours: the online softmax.** The per-row state is created with Helion's
allocation functions, inside the outer loop and before the inner one:
`m = hl.full([rows], float("-inf"), dtype=torch.float32)` and
`s = hl.zeros([rows], dtype=torch.float32)`, one value per row of the tile, in fp32. Then the
update of puzzle 19, chunk after chunk:

$$m' = \max\big(m, \max_{\text{chunk}} x\big) \qquad
s \leftarrow s\, e^{\,m - m'} + \sum_{\text{chunk}} e^{\,x - m'} \qquad m \leftarrow m'$$

and a second `hl.tile(t)` loop that stores $e^{x - m} / s$ chunk by chunk, cast to `z`'s dtype.

The traps are puzzle 19's, and Helion's masks do not save you from any of them:

* **The rescale** $e^{m - m'}$: without it the old terms keep their old scale as soon as a
  later chunk holds a larger value.
* **The maximum of the whole row**: one case puts each row's maximum in its last column,
  hundreds above the rest.
* **Start $m$ at $-\infty$**, not 0: one case has rows all below $-200$.
* **fp32 state and arithmetic** for fp16 and bf16 inputs: upcast each chunk with
  `.to(torch.float32)`, and keep `m` and `s` fp32.

**How it is graded.** Helion's interpreter runs every `hl.tile` as one tile covering the
whole range; the grader also runs your kernel tiled, with each case's tile sizes, which is
where a missing rescale shows.

**Sizes.** Rows of 20 to 1400 columns, up to 45 chunks, in fp32, fp16 and bf16.
"""
import helion
import helion.language as hl
import torch
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle


def spec(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
    # In fp32 whatever the input, rounded once to the output's dtype at the end.
    return torch.softmax(x.float(), dim=1).to(x.dtype)


def _never_rescaled(x, *, sizes):  # a look-alike: the running sum is not rescaled when the maximum grows
    dtype, x = x.dtype, x.float()
    m = torch.full((x.shape[0], 1), float("-inf"))
    s = torch.zeros(x.shape[0], 1)
    for chunk in x.split(sizes["B1"], dim=1):
        m = torch.maximum(m, chunk.amax(dim=1, keepdim=True))
        s = s + torch.exp(chunk - m).sum(dim=1, keepdim=True)
    return (torch.exp(x - m) / s).to(dtype)


def _per_chunk(x, *, sizes):  # a look-alike: each chunk normalised as if it were the whole row
    dtype, x = x.dtype, x.float()
    return torch.cat([torch.softmax(c, dim=1) for c in x.split(sizes["B2"], dim=1)], dim=1).to(dtype)


# ---- your part: finish the kernel ------------------------------------------------
@helion.kernel(autotune_effort="none")
def helion_online_softmax(x: torch.Tensor) -> torch.Tensor:
    n0, t = x.size()
    z = torch.empty_like(x)
    for rows in hl.tile(n0):
        # Your code here.
        pass
    return z
# ----------------------------------------------------------------------------------

HALF = {"x": "float16", "z": "float16"}
BF16 = {"x": "bfloat16", "z": "bfloat16"}


def _tiles(rows, chunk):
    """The outer tile of rows, then the chunk of each pass over the row (one per inner hl.tile)."""
    return {"B0": rows, "B1": chunk, "B2": chunk}


PUZZLE = Puzzle(
    id="puzzle38",
    title="Online softmax over long rows, in Helion",
    track="helion",
    statement=__doc__,
    spec=spec,
    kernel="helion_online_softmax",
    kind="helion",
    tiles={"B0": "N0", "B1": "T", "B2": "T"},
    grid=None,  # Helion launches one program per tile of the outer hl.tile loop
    cases=(
        # Four chunks of 64, the last one 8 columns short; two tiles of rows, one partial.
        Case("classic", sizes={"N0": 6, "T": 200}, blocks=_tiles(4, 64)),
        Case("one_row", sizes={"N0": 1, "T": 77}, blocks=_tiles(2, 16), seed=1),
        Case("row_shorter_than_chunk", sizes={"N0": 3, "T": 20}, blocks=_tiles(2, 32), seed=2),
        # Inputs in the hundreds: exp(x) overflows unless a maximum is subtracted.
        Case("large_magnitude", sizes={"N0": 3, "T": 150}, blocks=_tiles(2, 32), seed=3, scale=100.0),
        # Each row's last value is 400 above the rest: the maximum grows in the last chunk.
        Case("max_in_last_chunk", sizes={"N0": 3, "T": 150}, blocks=_tiles(2, 32), seed=4, scale=100.0,
             edges={"x": "max_last_chunk"}),
        # Every value below -200: a running maximum started at 0 leaves every exp at 0, and 0 / 0.
        Case("all_negative_rows", sizes={"N0": 3, "T": 150}, blocks=_tiles(2, 32), seed=5, scale=200.0,
             edges={"x": "all_negative"}),
        Case("fp16_long_rows", sizes={"N0": 4, "T": 1000}, blocks=_tiles(2, 128), seed=6, dtypes=HALF),
        Case("fp16_max_in_last_chunk", sizes={"N0": 3, "T": 300}, blocks=_tiles(2, 64), seed=7, scale=30.0,
             edges={"x": "max_last_chunk"}, dtypes=HALF),
        Case("bf16_rows", sizes={"N0": 4, "T": 300}, blocks=_tiles(4, 64), seed=8, dtypes=BF16),
        # Past anything a kernel could hard-code: rows longer than 1024 (18 or more chunks), offsets past 16 bits.
        Case("many_chunks", sizes={"N0": 30, "T": 1100}, blocks=_tiles(8, 64), seed=9, large=True,
             vary={"N0": (30, 40), "T": (1100, 1400)}),
    ),
    # fp32: sums in another order than torch's, a rescaled sum, and a GPU's fast exp.
    atol=1e-6,
    rtol=2e-5,
    # One rounding of a value in [0, 1] to the output's dtype, plus the fp32 error before it.
    tolerances={"float16": (1e-3, 2e-3), "bfloat16": (8e-3, 1.6e-2)},
    hints=(
        "Puzzle 19 in Helion: a loop over tiles of rows, and inside it two loops over tiles of columns, the "
        "first keeping a running maximum and sum.",
        "Inside `for rows in hl.tile(n0)`, make the running maximum with "
        "`hl.full([rows], float('-inf'), dtype=torch.float32)` and the running sum with `hl.zeros` of the same "
        "shape; then `for cols in hl.tile(t)` walks the chunks `x[rows, cols]`, upcast to fp32.",
        "In that loop: `m_new = torch.maximum(m, torch.amax(chunk, dim=1))`, "
        "`s = s * torch.exp(m - m_new) + torch.exp(chunk - m_new[:, None]).sum(dim=1)`, `m = m_new`.",
        "A second `for cols in hl.tile(t)` loop stores `torch.exp(chunk - m[:, None]) / s[:, None]`, cast to "
        "`z.dtype`, into `z[rows, cols]`.",
    ),
    look_alikes=(
        LookAlike("an online sum never rescaled when the maximum grows", _never_rescaled,
                  "when a chunk raises the maximum from m to m_new, multiply the running sum by "
                  "`torch.exp(m - m_new)` before adding the chunk's terms"),
        LookAlike("a softmax of each chunk on its own", _per_chunk,
                  "the maximum and the sum are the whole row's: a first `hl.tile(t)` loop finds them, "
                  "a second one stores `torch.exp(chunk - m[:, None]) / s[:, None]`"),
    ),
    bench=Bench(
        # Puzzle 19's sweep, fp16.
        sizes=({"N0": 4096, "T": 32768}, {"N0": 4096, "T": 8192}, {"N0": 1024, "T": 65536},
               {"N0": 16384, "T": 16384}, {"N0": 256, "T": 262144}),
        blocks=_tiles(1, 8192),
        launch={"num_warps": 16},
        # Read x once, write z once, in fp16; the second pass's re-read is the kernel's own cost.
        bytes=lambda s: 2 * 2 * s["N0"] * s["T"],
        baseline=lambda x: torch.softmax(x, dim=1),
        baseline_name="torch.softmax",
        dtypes=HALF,
    ),
)
