r"""
# Puzzle 25: Segmented scan with a combine function of your own

A cumulative sum that starts again at every segment start: each row is cut into segments,
and each element gets the sum of its segment up to and including it.

$$z_{i,j} = \sum_{k=s_{i,j}}^{j} x_{i,k}
\qquad s_{i,j} = \max\,\{\,k \le j : f_{i,k} \,\&\, 1 = 1\,\}\ \text{(or 0 if there is none)}$$

`x` (values, fp32), `f` (flags, int32) and `z` have shape `(N0, T)` and are stored row by
row. Element $j$ **starts a segment** where the lowest bit of its flag is set, `f & 1`: the
grader draws the flags as random 32-bit integers, so read only that bit (`f != 0` is not the
same thing). A row's first element always starts one, flag or not. The grid has `N0` programs:
program `i` owns row `i`, read in chunks of `B1` columns as in puzzle 24.

**The new idea: a scan is any associative combine.** `tl.associative_scan` scans with a
`@triton.jit` function of yours, over several tensors at once: here pairs (value, start flag).
Combining a pair `a` with the pair `b` that follows it:

$$(v_a, f_a) \oplus (v_b, f_b) = \big(\ f_b \;?\; v_b : v_a + v_b,\ \ f_a \,|\, f_b\ \big)$$

If a segment starts inside `b`, everything in `a` is cut off; otherwise `b` adds onto `a`. The
flag says whether a start lies anywhere in the span. The operator must be **associative**,
$(a \oplus b) \oplus c = a \oplus (b \oplus c)$, because Triton combines as a tree, in an order
you do not choose: a combine that keeps only `b`'s flag is not associative, and gives
different results for different trees. The same idea scans running maxima, linear recurrences
($h_t = a_t h_{t-1} + b_t$, as in state-space models) and the online softmax.

```python
@triton.jit
def combine(a_value, a_start, b_value, b_start):
    return ..., ...   # one result per scanned tensor

value, seen = tl.associative_scan((x, starts), 0, combine)
```

**The carry.** Between chunks, keep the sum of the segment still open at the end of the row
so far. It continues only into the lanes before the chunk's first start, where the scanned
flag is still 0; elsewhere the scan's own value stands. The next carry is the last lane of this
chunk's result. (Why not `tl.reduce((x, starts), 0, combine)` for the chunk's total? On a GPU,
Triton's reductions may swap a combine's operands: they need an operator that is commutative
as well as associative, and this one is not. Scans keep the order.)

Traps: lanes past `T` must not be stored (load them as value 0 and flag 0, so they neither add
nor cut); flags are read as `f & 1`; and a chunk boundary is no segment boundary.

**Sizes.** One case has rows of 1100 elements, 18 chunks, and a batch draws its sizes within
a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32, Int32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle


def spec(x: Float32[Tensor, "N0 T"], f: Int32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
    starts = (f & 1) == 1
    z = torch.empty_like(x)
    running = torch.zeros_like(x[:, 0])
    for j in range(x.shape[1]):  # one column at a time, every row at once
        running = torch.where(starts[:, j], x[:, j], running + x[:, j])
        z[:, j] = running
    return z


def _plain_cumsum(x, f):  # a look-alike: the flags ignored
    return torch.cumsum(x, dim=1)


def _any_nonzero_flag(x, f):  # a look-alike: a start wherever f != 0, nearly every element
    return spec(x, (f != 0).to(torch.int32))


def _segmented_cumsum_eager(x, f):  # the bench's PyTorch way: a cumsum less the sum before each segment
    c = torch.cumsum(x, dim=1)
    cols = torch.arange(x.shape[1], device=x.device).expand(x.shape)
    first = torch.where((f & 1) == 1, cols, 0).cummax(dim=1).values  # where each element's segment starts
    return c - (c.gather(1, first) - x.gather(1, first))


# ---- your part: finish the combine function and the kernel ----------------------
@triton.jit
def segment_combine(a_value, a_start, b_value, b_start):
    # Your code here: return (value, start flag) of a followed by b.
    pass


@triton.jit
def segscan_kernel(x_ptr, f_ptr, z_ptr, N0, T, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------

PUZZLE = Puzzle(
    id="puzzle25",
    title="Segmented scan with a combine function of your own",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="segscan_kernel",
    grid=lambda s: (s["N0"],),
    cases=(
        # Four chunks, the last one partly outside the row.
        Case("classic", sizes={"N0": 4, "T": 200}, blocks={"B1": 64}),
        Case("row_fills_one_block", sizes={"N0": 3, "T": 64}, blocks={"B1": 64}, seed=1),
        Case("rows_shorter_than_block", sizes={"N0": 5, "T": 20}, blocks={"B1": 32}, seed=2),
        # A row whose first flag is 0: it still begins a segment.
        Case("one_long_row", sizes={"N0": 1, "T": 500}, blocks={"B1": 128}, seed=7),
        Case("many_rows", sizes={"N0": 64, "T": 37}, blocks={"B1": 16}, seed=4),
        # Every third flag is 0: longer segments, more of them crossing a chunk boundary.
        Case("longer_segments", sizes={"N0": 4, "T": 150}, blocks={"B1": 32}, seed=5, edges={"f": "zeros"}),
        # Past anything a kernel could hard-code: rows longer than 1024 (18 or more chunks). Two
        # rows only: the interpreter scans with your combine function one element at a time.
        Case("many_chunks", sizes={"N0": 2, "T": 1100}, blocks={"B1": 64}, seed=8, large=True,
             vary={"N0": (2, 4), "T": (1100, 1400)}),
    ),
    atol=1e-5,
    rtol=1e-5,
    hints=(
        "A segmented scan carries two things per lane, the running value and whether a segment has started; "
        "the combine function decides which value wins. `tl.associative_scan` takes that function.",
        "The combine returns `(tl.where(b_start != 0, b_value, a_value + b_value), a_start | b_start)`; "
        "in the kernel, load the flags with `other=0` and keep `starts = flags & 1`.",
        "`value, seen = tl.associative_scan((x, starts), 0, segment_combine)`; the chunk's result is "
        "`tl.where(seen != 0, value, value + carry)`: the carry continues only up to the chunk's first start.",
        "The next carry is the result's last lane: with `z` the chunk's result and `lanes = tl.arange(0, B1)`, "
        "`tl.sum(tl.where(lanes == B1 - 1, z, 0.0), axis=0)`; padding lanes (value 0, no start) carry the "
        "last real value there.",
    ),
    look_alikes=(
        LookAlike("an ordinary cumulative sum (the segment starts ignored)", _plain_cumsum,
                  "a segment start cuts off everything before it: the combine keeps only b's value when b starts"),
        LookAlike("a segment start wherever f != 0 (not where f & 1 is 1)", _any_nonzero_flag,
                  "read only the flag's lowest bit: `starts = flags & 1`"),
    ),
    bench=Bench(
        sizes=({"N0": 4096, "T": 8192}, {"N0": 4096, "T": 1024}, {"N0": 16384, "T": 4096}),
        blocks={"B1": 1024},
        # Read x and f once, write z once.
        bytes=lambda s: 3 * 4 * s["N0"] * s["T"],
        baseline=_segmented_cumsum_eager,
        baseline_name="cumsum, cummax and gather (eager)",
        launch={"num_warps": 4},
    ),
)
