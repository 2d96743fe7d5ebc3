r"""
# Puzzle 24: Cumulative sum along rows longer than a block

Replace every element of a matrix by the sum of its row up to and including it: an
**inclusive scan**, as `torch.cumsum` computes it.

$$z_{i,j} = \sum_{k=0}^{j} x_{i,k}$$

`x` and `z` have shape `(N0, T)` and are stored row by row. The grid has `N0` programs:
program `i` owns row `i`. A row is longer than a block: it is read in chunks of `B1` columns
(`B1` a power of two), and `T` is any length, so the last chunk is only partly inside the row.

**The new idea: a scan inside a block, and a carry between blocks.** `tl.cumsum(v, axis=0)`
scans one block in registers: `tl.associative_scan(v, 0, combine)` with `combine(a, b) = a + b`,
which Triton runs as a tree, about $\log_2 B_1$ steps deep rather than $B_1$. A row of many
blocks needs one number more: the **carry**, the sum of every chunk before this one. Each
chunk's result is its own scan plus the carry; then the carry grows by the chunk's total. The
row is read once and written once, so a good kernel runs at nearly the speed of a copy:
PyTorch's eager `cumsum` reaches about a third of it on rows of 8192.

The traps the cases spring:

* **The carry.** A chunk scanned on its own restarts at 0; a carry added but never updated,
  or overwritten with the last chunk's total, goes wrong from the second or third chunk on.
  Some rows here span five chunks.
* **Inclusive, not exclusive.** $z_{i,j}$ includes $x_{i,j}$ itself: $z_{i,0} = x_{i,0}$.
* **The last chunk.** Lanes past `T` must neither be read nor stored, and must not add to the
  carry: load them as 0 with the same mask you store with.
* **Rounding.** The tree adds in another order than `torch.cumsum`; in fp32 the difference is
  a few units in the last place, well inside the tolerance.
* **Sizes.** One case has rows of 1100 elements, 18 chunks, and
  a batch draws its sizes within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle


def spec(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
    return torch.cumsum(x, dim=1)


def _chunks(x, block):
    """x's columns in chunks of ``block``, the last one shorter."""
    return torch.split(x, block, dim=1)


def _restarting(x, *, sizes):  # a look-alike: each chunk scanned on its own, no carry
    return torch.cat([torch.cumsum(c, dim=1) for c in _chunks(x, sizes["B1"])], dim=1)


def _carry_overwritten(x, *, sizes):  # a look-alike: carry = the previous chunk's total only
    parts, carry = [], torch.zeros_like(x[:, :1])
    for c in _chunks(x, sizes["B1"]):
        parts.append(torch.cumsum(c, dim=1) + carry)
        carry = c.sum(dim=1, keepdim=True)
    return torch.cat(parts, dim=1)


def _exclusive(x):  # a look-alike: the sum of the elements before j, without x[j] itself
    return torch.cumsum(x, dim=1) - x


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def cumsum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------

PUZZLE = Puzzle(
    id="puzzle24",
    title="Cumulative sum along rows longer than a block",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="cumsum_kernel",
    grid=lambda s: (s["N0"],),
    cases=(
        # Five chunks, the last one partly outside the row.
        Case("classic", sizes={"N0": 4, "T": 300}, blocks={"B1": 64}),
        Case("row_fills_one_block", sizes={"N0": 3, "T": 64}, blocks={"B1": 64}, seed=1),
        Case("rows_exact_multiple_of_block", sizes={"N0": 3, "T": 128}, blocks={"B1": 32}, seed=2),
        Case("rows_shorter_than_block", sizes={"N0": 5, "T": 20}, blocks={"B1": 32}, seed=3),
        Case("one_long_row", sizes={"N0": 1, "T": 1000}, blocks={"B1": 128}, seed=4),
        Case("many_rows", sizes={"N0": 64, "T": 37}, blocks={"B1": 16}, seed=5),
        # Past anything a kernel could hard-code: rows longer than 1024 (18 or more chunks), offsets past 16 bits.
        Case("many_chunks", sizes={"N0": 30, "T": 1100}, blocks={"B1": 64}, seed=6, large=True,
             vary={"N0": (30, 40), "T": (1100, 1400)}),
        # Rows of a model's width (65 or more chunks), a sample of the rows run.
        Case("long_rows", sizes={"N0": 40, "T": 8200}, blocks={"B1": 128}, seed=7, large=True,
             vary={"N0": (34, 48), "T": (8193, 9000)}),
    ),
    # Partial sums reach about sqrt(T) ~ 30; fp32 sums in another order differ by ~1e-6 of that.
    atol=1e-4,
    rtol=1e-5,
    hints=(
        "A scan of a long row is scans of its chunks plus a carry: `tl.cumsum` scans a chunk, and the sum of "
        "everything before it is added on.",
        "Keep `carry = 0.0` (fp32) before a loop `for start in range(0, T, B1)`; in the loop, "
        "`cols = start + tl.arange(0, B1)`, `mask = cols < T`, and load with `other=0.0`.",
        "`tl.cumsum(x, axis=0)` scans the chunk; add `carry` to it and store with the mask.",
        "After the store, `carry += tl.sum(x, axis=0)`: the padding lanes were loaded as 0, so "
        "they add nothing.",
    ),
    look_alikes=(
        LookAlike("a scan that restarts at 0 in every chunk (no carry between chunks)", _restarting,
                  "add the sum of the chunks before (the carry) to each chunk's scan"),
        LookAlike("a carry that holds only the previous chunk's total (overwritten, not accumulated)",
                  _carry_overwritten, "accumulate the carry: `carry += tl.sum(x, axis=0)`"),
        LookAlike("an exclusive scan (each element's own value left out)", _exclusive,
                  "z[i, j] includes x[i, j]: `tl.cumsum` is already inclusive, do not subtract x"),
    ),
    bench=Bench(
        sizes=({"N0": 4096, "T": 8192}, {"N0": 4096, "T": 1024}, {"N0": 4096, "T": 32768},
               {"N0": 16384, "T": 4096}, {"N0": 256, "T": 131072}),
        blocks={"B1": 1024},
        # Read x once, write z once, fp32.
        bytes=lambda s: 2 * 4 * s["N0"] * s["T"],
        baseline=lambda x: torch.cumsum(x, dim=1),
        baseline_name="torch.cumsum",
        compile_baseline=True,
        # At 8192 columns a chunked scan adds in another order than torch: an element near 0 was
        # 3e-4 off on an H100. A missing or wrong carry is off by whole values.
        tolerances={"float32": (5e-3, 1e-5)},
        launch={"num_warps": 4},
    ),
)
