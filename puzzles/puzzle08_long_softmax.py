r"""
# Puzzle 8: Long softmax

Apply a softmax to every row of a matrix whose rows are too long for one block.

$$z_{i,j} = \frac{e^{\,x_{i,j} - m_i}}{\sum_{k=0}^{T-1} e^{\,x_{i,k} - m_i}}
\qquad m_i = \max_{k} x_{i,k}$$

`x` and `z` have shape `(N0, T)`, stored row by row. As in puzzle 7, the grid has
`cdiv(N0, B0)` programs, program `p` owns rows `p * B0` up to `p * B0 + B0 - 1`, and it
must walk each row in chunks of `B1` columns because `T` is long. `N1` again equals `T`;
use `T`.

Subtracting the row maximum $m_i$ does not change the result (it cancels between the
numerator and the denominator), but it keeps every exponent at most 0. Without it,
`exp` overflows to `inf` in fp32 as soon as an input exceeds about 88, and the output
becomes `nan`. Some cases here have inputs in the hundreds.

The new idea is that the denominator depends on the **whole row**, which you only see one
chunk at a time. You may read the row more than once:

* a plain way is three passes: one for the maximum, one for the sum of exponentials, one
  that writes the outputs;
* the **online softmax** merges the first two. Keep a running maximum $m$ and a running
  sum $s$ of $e^{x - m}$. When a chunk raises the maximum to $m'$, every term already in
  $s$ was computed with the old $m$, so rescale: $s \leftarrow s\,e^{m - m'} +
  \sum_{\text{chunk}} e^{x - m'}$. After one pass $m = m_i$ and $s$ is the denominator; a
  second pass writes $e^{x - m}/s$.

**Sizes.** One case has rows of 1100 elements, over 17 chunks, and a batch draws its sizes
within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Puzzle, cdiv, seeds


def spec(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
    x_max = x.max(dim=1, keepdim=True).values
    e = torch.exp(x - x_max)
    return e / e.sum(dim=1, keepdim=True)


def _never_rescaled(x, *, sizes):  # a look-alike: the running sum is not rescaled when the maximum grows
    m = torch.full((x.shape[0], 1), float("-inf"))
    s = torch.zeros(x.shape[0], 1)
    for chunk in x.split(sizes["B1"], dim=1):
        m = torch.maximum(m, chunk.max(dim=1, keepdim=True).values)
        s = s + torch.exp(chunk - m).sum(dim=1, keepdim=True)
    return torch.exp(x - m) / s


def _per_chunk(x, *, sizes):  # a look-alike: each chunk normalised as if it were the whole row
    return torch.cat([torch.softmax(chunk, dim=1) for chunk in x.split(sizes["B1"], dim=1)], dim=1)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle08",
    title="Long softmax",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="softmax_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]),),
    derive=lambda s: {"N1": s["T"]},  # N1 is T under its classic name, wherever T is drawn
    cases=(
        *seeds(Case("classic", sizes={"N0": 4, "N1": 200, "T": 200}, blocks={"B0": 1, "B1": 32}), 1, 2),
        Case("row_blocks_with_tails", sizes={"N0": 5, "N1": 100, "T": 100}, blocks={"B0": 2, "B1": 16}, seed=3),
        Case("row_shorter_than_block", sizes={"N0": 3, "N1": 20, "T": 20}, blocks={"B0": 4, "B1": 32}, seed=4),
        # Inputs around +-100 (up to about +-300): exp without max-subtraction overflows.
        Case("large_magnitude", sizes={"N0": 3, "N1": 70, "T": 70}, blocks={"B0": 2, "B1": 32}, seed=5, scale=100.0),
        # Each row's maximum is its last value, 400 above the rest: a maximum taken from the
        # first chunk only leaves exp(x - max) overflowing there.
        Case("max_in_last_chunk", sizes={"N0": 3, "N1": 70, "T": 70}, blocks={"B0": 2, "B1": 32}, seed=6,
             scale=100.0, edges={"x": "max_last_chunk"}),
        # Every value is below -200, so every exp(x) underflows to 0: a running maximum that
        # starts at 0 instead of -inf never moves and the row becomes 0 / 0.
        Case("all_negative_rows", sizes={"N0": 3, "N1": 70, "T": 70}, blocks={"B0": 2, "B1": 32}, seed=7,
             scale=200.0, edges={"x": "all_negative"}),
        # Past anything a kernel could hard-code: rows longer than 1024 (over 30 chunks), offsets past 16 bits.
        Case("many_chunks", sizes={"N0": 30, "N1": 1100, "T": 1100}, blocks={"B0": 1, "B1": 64}, seed=8,
             large=True, vary={"N0": (30, 40), "T": (1100, 1400)}),
    ),
    # fp32; the kernel sums in a different order than torch, and a GPU's tl.exp is a fast
    # approximation, so allow a relative error of 1e-4.
    atol=1e-5,
    rtol=1e-4,
    hints=(
        "Nothing can be written before the row's maximum and the sum of its exponentials are known: two "
        "passes over the row. In the first, keep both running, and rescale the sum whenever the maximum "
        "grows.",
        "Load the columns past `T` as `float('-inf')` so that they add `exp(-inf) = 0`; but "
        "a row that is entirely `-inf` gives `-inf - (-inf) = nan`, so load rows past `N0` "
        "as 0 (they are never stored).",
        "Pass 1: `m = tl.full([B0], float('-inf'), tl.float32)` and `s = tl.zeros([B0], "
        "dtype=tl.float32)`; per chunk, `m_new = tl.maximum(m, tl.max(tile, axis=1))`, "
        "`s = s * tl.exp(m - m_new) + tl.sum(tl.exp(tile - m_new[:, None]), axis=1)`, `m = m_new`. "
        "Pass 2: loop over the chunks again and store `tl.exp(tile - m[:, None]) / s[:, None]`.",
    ),
    look_alikes=(
        LookAlike("an online sum never rescaled when the maximum grows", _never_rescaled,
                  "when a chunk raises the maximum from m to m_new, multiply the running sum by "
                  "`tl.exp(m - m_new)` before adding the chunk's terms"),
        LookAlike("a softmax of each B1-wide chunk on its own", _per_chunk,
                  "the maximum and the denominator are the whole row's: a first pass over every chunk "
                  "finds them, a second one stores `tl.exp(tile - m[:, None]) / s[:, None]`"),
        LookAlike("exp(x - max) without the division by the row's sum",
                  lambda x: torch.exp(x - x.max(dim=1, keepdim=True).values),
                  "divide what you store by the row's sum of exponentials, `/ s[:, None]`"),
    ),
)
