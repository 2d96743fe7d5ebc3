r"""
# Puzzle 19: Online softmax, rows longer than a block

Apply a softmax to every row of a matrix whose rows are too long to hold in one block:
vocabulary logits, or the attention scores of a long sequence.

$$z_{i,j} = \frac{e^{\,x_{i,j} - m_i}}{\sum_{k=0}^{T-1} e^{\,x_{i,k} - m_i}}
\qquad m_i = \max_{k} x_{i,k}$$

`x` and `z` have shape `(N0, T)` and are stored row by row. The grid has `N0` programs:
program `i` owns row `i`, and walks it in chunks of `B1` columns (`B1` a power of two, `T`
any length, usually many times `B1`).

In puzzle 18 the whole row sat in registers, so its maximum and its sum were one `tl.max`
and one `tl.sum` away. Here the denominator depends on the **whole row**, which you only
ever see one chunk at a time. Reading the row three times (maximum, sum, output) works, but
the kernel is memory-bound: every extra pass over `x` costs as much as the useful work.

The new idea is the **online softmax**, which finds the maximum and the sum in a single
pass. Keep a running maximum $m$ (start it at $-\infty$) and a running sum $s$ of
$e^{x - m}$ (start it at 0). When a chunk raises the maximum to $m'$, every term already in
$s$ was computed against the old $m$, so rescale them before adding the chunk's:

$$m' = \max\big(m, \max_{\text{chunk}} x\big) \qquad
s \leftarrow s\, e^{\,m - m'} + \sum_{\text{chunk}} e^{\,x - m'} \qquad m \leftarrow m'$$

After the first pass $m = m_i$ and $s$ is the denominator; a second pass writes
$e^{x - m}/s$ chunk by chunk. The same update is the heart of FlashAttention.

That second read of the row is free only if it comes from the L2 cache, where the first pass
has just left it. With thousands of long rows in flight, other rows push it out before it is
read again. `tl.load` takes a hint for that: `eviction_policy="evict_last"` on the first pass
asks L2 to keep the row, and `"evict_first"` on the second, the row's last read, lets it go.
On an H100, at fp16 4096 x 32768, the hints take the same kernel from about 65 % to about
85 % of the copy bandwidth. (The interpreter ignores them: they change speed, not values.)

The traps the cases spring:

* **The rescale.** Leave out $e^{m - m'}$ and the old terms keep their old, too large scale:
  the rows come out wrong as soon as a later chunk holds a larger value, which is most rows.
* **The maximum is the whole row's.** A maximum taken from the first chunk only overflows
  `exp` when a later chunk holds a value far above it: one case puts each row's maximum in
  its last column, hundreds above the rest.
* **Start the maximum at $-\infty$, not 0.** One case has rows that are all below $-200$:
  $e^{x - 0}$ underflows to 0 for every element, and the row becomes $0/0$.
* **Padding lanes.** The last chunk runs past `T`: load its missing lanes as `-inf`, so
  that they never raise the maximum and add $e^{-\infty} = 0$ to the sum.
* **Half precision.** Load fp16 or bf16, compute in fp32, and let the store round once to
  the output's dtype, as the spec does.
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
    # In fp32 whatever the input, rounded once to the output's dtype at the end.
    return torch.softmax(x.float(), dim=1).to(x.dtype)


def _never_rescaled(x, *, sizes):  # a look-alike: the running sum is not rescaled when the maximum grows
    dtype, x = x.dtype, x.float()
    m = torch.full((x.shape[0], 1), float("-inf"))
    s = torch.zeros(x.shape[0], 1)
    for chunk in x.split(sizes["B1"], dim=1):
        m = torch.maximum(m, chunk.max(dim=1, keepdim=True).values)
        s = s + torch.exp(chunk - m).sum(dim=1, keepdim=True)
    return (torch.exp(x - m) / s).to(dtype)


def _per_chunk(x, *, sizes):  # a look-alike: each chunk normalised as if it were the whole row
    dtype, x = x.dtype, x.float()
    return torch.cat([torch.softmax(c, dim=1) for c in x.split(sizes["B1"], dim=1)], dim=1).to(dtype)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def online_softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------

HALF = {"x": "float16", "z": "float16"}
BF16 = {"x": "bfloat16", "z": "bfloat16"}

PUZZLE = Puzzle(
    id="puzzle19",
    title="Online softmax, rows longer than a block",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="online_softmax_kernel",
    grid=lambda s: (s["N0"],),
    cases=(
        # Four chunks, the last one 8 columns short.
        Case("classic", sizes={"N0": 4, "T": 200}, blocks={"B1": 64}),
        Case("row_fills_chunks", sizes={"N0": 3, "T": 128}, blocks={"B1": 32}, seed=1),
        Case("one_row", sizes={"N0": 1, "T": 77}, blocks={"B1": 16}, seed=2),
        Case("row_shorter_than_block", sizes={"N0": 3, "T": 20}, blocks={"B1": 32}, seed=3),
        Case("many_rows", sizes={"N0": 32, "T": 40}, blocks={"B1": 16}, seed=4),
        # Inputs in the hundreds: exp(x) overflows unless a maximum is subtracted.
        Case("large_magnitude", sizes={"N0": 3, "T": 150}, blocks={"B1": 32}, seed=5, scale=100.0),
        # Each row's last value is 400 above the rest: a maximum taken from the first chunk
        # leaves exp(x - max) overflowing there.
        Case("max_in_last_chunk", sizes={"N0": 3, "T": 150}, blocks={"B1": 32}, seed=6, scale=100.0,
             edges={"x": "max_last_chunk"}),
        # Every value below -200: a running maximum started at 0 leaves every exp at 0, and 0 / 0.
        Case("all_negative_rows", sizes={"N0": 3, "T": 150}, blocks={"B1": 32}, seed=7, scale=200.0,
             edges={"x": "all_negative"}),
        Case("constant_rows", sizes={"N0": 3, "T": 90}, blocks={"B1": 32}, seed=8, edges={"x": "constant_rows"}),
        Case("fp16_long_rows", sizes={"N0": 4, "T": 1000}, blocks={"B1": 128}, seed=9, dtypes=HALF),
        Case("fp16_max_in_last_chunk", sizes={"N0": 3, "T": 300}, blocks={"B1": 64}, seed=10, scale=30.0,
             edges={"x": "max_last_chunk"}, dtypes=HALF),
        Case("bf16_rows", sizes={"N0": 4, "T": 300}, blocks={"B1": 64}, seed=11, dtypes=BF16),
        # Past anything a kernel could hard-code: rows longer than 1024 (18 or more chunks), offsets past 16 bits.
        Case("many_chunks", sizes={"N0": 30, "T": 1100}, blocks={"B1": 64}, seed=12, large=True,
             vary={"N0": (30, 40), "T": (1100, 1400)}),
        # A model's width, 33 or more chunks of 256, and many rows, of which a sample runs.
        Case("model_width", sizes={"N0": 40, "T": 8200}, blocks={"B1": 256}, seed=13, large=True,
             vary={"N0": (34, 48), "T": (8193, 9000)}),
    ),
    # fp32: the kernel sums in another order than torch, rescales the sum, and a GPU's tl.exp
    # is a fast approximation.
    atol=1e-6,
    rtol=2e-5,
    # One rounding of a value in [0, 1] to the output's dtype, plus the fp32 error before it.
    tolerances={"float16": (1e-3, 2e-3), "bfloat16": (8e-3, 1.6e-2)},
    hints=(
        "The row no longer fits in a block: puzzle 18's maximum and sum become running values over chunks, "
        "the sum rescaled whenever the maximum grows, and a second pass over the chunks writes the output.",
        "Pass 1: `m = float('-inf')` and `s = 0.0` (as fp32 scalars, e.g. `tl.max` of a "
        "`tl.full` block, or plain Python floats); for each `start in range(0, T, B1)` load the "
        "chunk at `cols = start + tl.arange(0, B1)` with `mask=cols < T, other=float('-inf')` and "
        "upcast it with `.to(tl.float32)`.",
        "In the loop: `m_new = tl.maximum(m, tl.max(chunk, axis=0))`, then "
        "`s = s * tl.exp(m - m_new) + tl.sum(tl.exp(chunk - m_new), axis=0)` and `m = m_new`.",
        "Pass 2: loop over the chunks again and store `tl.exp(chunk - m) / s` with `mask=cols < T`; "
        "`tl.store` rounds to the output's dtype. For speed on a GPU, add `eviction_policy=\"evict_last\"` "
        "to the first pass's load and `eviction_policy=\"evict_first\"` to the second's.",
    ),
    look_alikes=(
        LookAlike("an online sum never rescaled when the maximum grows", _never_rescaled,
                  "when a chunk raises the maximum from m to m_new, multiply the running sum by "
                  "`tl.exp(m - m_new)` before adding the chunk's terms"),
        LookAlike("a softmax of each B1-wide chunk on its own", _per_chunk,
                  "the maximum and the sum are the whole row's: a first pass over every chunk finds them, "
                  "a second one stores `tl.exp(chunk - m) / s`"),
    ),
    bench=Bench(
        sizes=({"N0": 4096, "T": 32768}, {"N0": 4096, "T": 8192}, {"N0": 1024, "T": 65536},
               {"N0": 16384, "T": 16384}, {"N0": 256, "T": 262144}),
        blocks={"B1": 8192},
        launch={"num_warps": 16},
        # Read x once, write z once, in fp16; the second pass's re-read is the kernel's own cost.
        bytes=lambda s: 2 * 2 * s["N0"] * s["T"],
        baseline=lambda x: torch.softmax(x, dim=1),
        baseline_name="torch.softmax",
        dtypes=HALF,
    ),
)
