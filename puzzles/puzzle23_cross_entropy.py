r"""
# Puzzle 23: Cross-entropy, forward and backward in one kernel

The last layer of a language model turns each token's hidden state into one logit per word
of the vocabulary, and the loss is the cross-entropy of those logits against the next
token. Write the loss of every row **and** its gradient with respect to the logits, in one
kernel.

For row $i$ with logits $x_{i,\cdot}$, target class $t_i$ and upstream gradient $g_i$:

$$\mathrm{lse}_i = \log \sum_{j=0}^{V-1} e^{\,x_{i,j}} \qquad
\mathrm{loss}_i = \mathrm{lse}_i - x_{i,t_i} \qquad
dx_{i,j} = g_i \left( e^{\,x_{i,j} - \mathrm{lse}_i} - [\,j = t_i\,] \right)$$

A row whose target is **-100** (PyTorch's `ignore_index`: padding, or the prompt's tokens
in fine-tuning) is ignored: its loss is 0 and its gradient row is all 0.

* `x`: `(N, V)` logits, stored row by row; fp32, or bf16 in some cases.
* `target`: `(N,)` int64 class indices in `[0, V)`, or -100.
* `dloss`: `(N,)` fp32, the gradient of the final loss with respect to each row's loss
  ($g_i$): for the usual mean over the $n$ rows that are not ignored it is $1/n$ everywhere,
  which the caller knows before the launch.
* `loss`: `(N,)` fp32; `dx`: `(N, V)`, the dtype of `x`.

The grid has `N` programs: program `i` owns row `i` and walks it in chunks of `B1` columns.
`V` is a vocabulary size (32000, 50257, 128256, ...): never a power of two, and far longer
than a block.

**The new idea: fuse the backward into the forward.** The logits of 4096 tokens over a
128k vocabulary take 2 GB in fp32. PyTorch's eager cross-entropy reads them to compute the
loss, writes the softmax out, and the backward reads it again to form the gradient. But
the gradient needs only the row's logsumexp, which the forward has just found: so one
kernel finds it with an online pass (puzzle 19), writes the loss, and a second pass over the
row writes $dx$ directly. The logits are read once from memory, the gradient is written
once, and the probabilities are never stored. As in puzzle 19, the second pass's read comes
from L2 when the first pass loads with `eviction_policy="evict_last"` (and the second with
`"evict_first"`): on an H100 at fp32 4096 x 32768 that is about 90 % of the copy bandwidth,
against about 65 % without the hints and about 25 % for PyTorch's eager loss and backward.

The traps the cases spring:

* **Max subtraction.** $\mathrm{lse} = m + \log \sum e^{x - m}$ with $m$ the row's maximum,
  kept as an online maximum and a rescaled sum. Some cases have logits above 88, where
  $e^x$ overflows fp32; one has each row's maximum in its last column, far above the first
  chunk's; one has rows all below $-200$, where a maximum started at 0 leaves every
  $e^{x - 0}$ at 0.
* **The target's own logit.** One scalar load, `x_row + t`. For an ignored row `t` is -100:
  an unmasked load reads 100 elements before the row (or before the tensor).
* **The -1.** The gradient is the softmax *minus* the one-hot target, scaled by $g_i$.
* **Ignored rows** store a loss of 0 and a gradient row of 0: every element is still
  written.
* **bf16 logits.** Compute in fp32; the loss stays fp32, and `dx` rounds once, on the store,
  to bf16.
* **Sizes.** One case has a vocabulary of 1100, 18 chunks, and
  a batch draws its sizes within a range, so fit nothing to the sizes you see.
"""
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from jaxtyping import Float32, Int64
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle, Variant

IGNORE = -100  # PyTorch's default ignore_index

# The ignore index: each student of a class graded with a secret gets their own, PyTorch's -100 or
# the id of a padding token (0 to 15, below every case's vocabulary). A kernel tells an ignored row
# only by comparing with it: one written for -100 (`t != -100`, or `t >= 0`) takes a padding id for a
# class, and one written for a padding id treats -100 as a column. Puzzle 34 calls this kernel: it
# shares this value.
IGNORE_INDEX = Variant("IGNORE_INDEX", choices=(-100, *range(16)), default=IGNORE, what="the ignore index",
                       also={"TARGETS": lambda i: "class indices in `[0, V)`, or -100." if i < 0 else
                             f"class indices in `[0, V)`; a target of {i} marks an ignored row.",
                             "IGNORED_LOAD": lambda i: (
                                 "For an ignored row `t` is -100:\n  an unmasked load reads 100 elements before "
                                 "the row (or before the tensor)." if i == -100 else
                                 f"For an ignored row `t` is {i}, a column\n  like any other: only `t == {i}` tells "
                                 "the row apart, and its loss and gradient are still 0.")},
                       stated=("target is **{{IGNORE_INDEX}}** (PyTorch's", "int64 {{TARGETS}}",
                               "`x_row + t`. {{IGNORED_LOAD}}"))


def spec(x: Float32[Tensor, "N V"], target: Int64[Tensor, "N"],
         dloss: Float32[Tensor, "N"], *, IGNORE_INDEX: int) -> tuple[Float32[Tensor, "N"], Float32[Tensor, "N V"]]:
    # In fp32 whatever the logits' dtype; dx rounds once to it at the end.
    xf = x.float()
    kept = target != IGNORE_INDEX
    loss = F.cross_entropy(xf, target, reduction="none", ignore_index=IGNORE_INDEX)
    onehot = F.one_hot(torch.where(kept, target, 0), x.shape[1]).float()
    dx = (torch.softmax(xf, dim=1) - onehot) * torch.where(kept, dloss, 0.0)[:, None]
    return loss, dx.to(x.dtype)


def _no_minus_one(x, target, dloss, *, IGNORE_INDEX):  # a look-alike: dx = softmax * dloss, the -1 missing
    loss, _ = spec(x, target, dloss, IGNORE_INDEX=IGNORE_INDEX)
    kept = (target != IGNORE_INDEX).float()
    return loss, (torch.softmax(x.float(), dim=1) * (dloss * kept)[:, None]).to(x.dtype)


def _not_scaled(x, target, dloss, *, IGNORE_INDEX):  # a look-alike: dx = softmax - onehot, without dloss
    return spec(x, target, torch.ones_like(dloss), IGNORE_INDEX=IGNORE_INDEX)


def _ignore_not_honoured(x, target, dloss, *, IGNORE_INDEX):  # a look-alike: an ignored row as any other row
    """-100 names no column: such a row's loss is its lse, its gradient the softmax. A padding id
    names one: such a row is an ordinary row."""
    xf = x.float()
    loss, dx = spec(x, target, dloss, IGNORE_INDEX=IGNORE_INDEX)
    ignored = target == IGNORE_INDEX
    lse = torch.logsumexp(xf, dim=1)
    column = F.one_hot(target.clamp(0, x.shape[1] - 1), x.shape[1]).float() * (target >= 0).float()[:, None]
    loss = torch.where(ignored, lse - (xf * column).sum(dim=1), loss)
    dx = torch.where(ignored[:, None], ((torch.softmax(xf, dim=1) - column) * dloss[:, None]).to(x.dtype), dx)
    return loss, dx


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def cross_entropy_kernel(x_ptr, target_ptr, dloss_ptr, loss_ptr, dx_ptr, N, V, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------

BF16 = {"x": "bfloat16", "dx": "bfloat16"}
IGNORED = {"target": "ignore_index"}


def _eager(x, target, dloss, *, IGNORE_INDEX):
    """PyTorch eager: the loss, then autograd's backward for the gradient of the logits."""
    x = x.detach().requires_grad_()
    loss = F.cross_entropy(x, target, reduction="none", ignore_index=IGNORE_INDEX)
    (dx,) = torch.autograd.grad(loss, x, dloss)
    return loss.detach(), dx


def _hints(ignore: int) -> tuple[str, ...]:
    return (
        "Puzzle 19's first pass gives the row's log-sum-exp, and the loss follows from it and the target's "
        "logit; a second pass over the same chunks writes the gradient: the softmax minus the one-hot target, "
        "times the row's `dloss`.",
        "Pass 1 is puzzle 19's: `m` from -inf and `s` from 0, and per chunk (the columns "
        "`cols = start + tl.arange(0, B1)`, loaded with `mask=cols < V, other=float('-inf')`, upcast "
        "to fp32) `m_new = tl.maximum(m, tl.max(chunk, axis=0))`, "
        "`s = s * tl.exp(m - m_new) + tl.sum(tl.exp(chunk - m_new), axis=0)`, `m = m_new`.",
        f"Then, with `x_row = x_ptr + row * V`: `t = tl.load(target_ptr + row)`, `kept = t != {ignore}`, "
        "`x_t = tl.load(x_row + t, mask=kept, other=0.0).to(tl.float32)`, and store "
        "`tl.where(kept, m - x_t + tl.log(s), 0.0)` to `loss_ptr + row`.",
        "Pass 2: `g = tl.where(kept, tl.load(dloss_ptr + row), 0.0)`; per chunk (loaded again, `evict_first` after pass 1's `evict_last`) store "
        "`(tl.exp(chunk - m) / s - tl.where(cols == t, 1.0, 0.0)) * g` with `mask=cols < V`, `cols` the "
        "chunk's column indices.",
    )


def _look_alikes(ignore: int) -> tuple[LookAlike, ...]:
    return (
        LookAlike("the gradient without the -1 at the target (softmax times dloss)", _no_minus_one,
                  "subtract 1 at the target's column, `tl.where(cols == t, 1.0, 0.0)`, before scaling by dloss"),
        LookAlike("the gradient not scaled by dloss (softmax minus one-hot)", _not_scaled,
                  "multiply the gradient by the row's upstream gradient, `tl.load(dloss_ptr + row)`"),
        LookAlike("the ignore index not honoured (a target of -100 treated as a column no logit has)" if ignore < 0 else
                  f"the ignore index not honoured (a target of {ignore} treated as the class {ignore})",
                  _ignore_not_honoured,
                  f"where `t == {ignore}`, store a loss of 0 and a gradient row of 0: "
                  f"`kept = t != {ignore}`, then `tl.where(kept, ..., 0.0)`"),
    )


PUZZLE = Puzzle(
    id="puzzle23",
    title="Cross-entropy, forward and backward in one kernel",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="cross_entropy_kernel",
    output=("loss", "dx"),
    grid=lambda s: (s["N"],),
    ranges={"target": lambda s: (0, s["V"])},
    cases=(
        # Four chunks, the last one 8 columns short.
        Case("classic", sizes={"N": 4, "V": 200}, blocks={"B1": 64}),
        Case("vocab_fills_chunks", sizes={"N": 3, "V": 128}, blocks={"B1": 32}, seed=1),
        Case("one_row", sizes={"N": 1, "V": 77}, blocks={"B1": 16}, seed=2),
        Case("vocab_shorter_than_block", sizes={"N": 3, "V": 20}, blocks={"B1": 32}, seed=3),
        Case("many_rows", sizes={"N": 32, "V": 40}, blocks={"B1": 16}, seed=4),
        # Rows 0 and 3 have the ignore index as target: loss 0 and a gradient row of 0.
        Case("ignored_rows", sizes={"N": 6, "V": 100}, blocks={"B1": 32}, seed=5, edges=IGNORED),
        # Logits above 100: exp(x) overflows unless the maximum is subtracted.
        Case("large_logits", sizes={"N": 3, "V": 150}, blocks={"B1": 32}, seed=6, scale=50.0),
        # Each row's last logit is 100 above the rest: a maximum taken from the first chunk
        # leaves exp(x - max) overflowing there.
        Case("max_in_last_chunk", sizes={"N": 3, "V": 150}, blocks={"B1": 32}, seed=7, scale=25.0,
             edges={"x": "max_last_chunk"}),
        # Every logit below -200: a running maximum started at 0 leaves every exp at 0.
        Case("all_negative_rows", sizes={"N": 3, "V": 150}, blocks={"B1": 32}, seed=8, scale=200.0,
             edges={"x": "all_negative"}),
        Case("constant_rows", sizes={"N": 3, "V": 90}, blocks={"B1": 32}, seed=9, edges={"x": "constant_rows"}),
        Case("bf16_logits", sizes={"N": 6, "V": 300}, blocks={"B1": 64}, seed=10, dtypes=BF16, edges=IGNORED),
        # Past anything a kernel could hard-code: vocabularies longer than 1024 (18 or more chunks), offsets
        # past 16 bits.
        Case("many_chunks", sizes={"N": 30, "V": 1100}, blocks={"B1": 64}, seed=11, edges=IGNORED, large=True,
             vary={"N": (30, 40), "V": (1100, 1400)}),
        # A model's vocabulary, a multiple of no block, in 33 or more chunks; a sample of the rows runs.
        Case("vocabulary", sizes={"N": 40, "V": 32771}, blocks={"B1": 1024}, seed=12, edges=IGNORED, large=True,
             vary={"N": (34, 48), "V": (32769, 40000)}),
    ),
    # fp32: another summation order than torch's, the rescaled sum, and a GPU's fast exp and log.
    atol=2e-5,
    rtol=2e-5,
    # dx rounded once to bf16 (a relative 2^-9), from values of the order of dloss.
    tolerances={"bfloat16": (8e-3, 1.6e-2)},
    hints=_hints(IGNORE),
    look_alikes=_look_alikes(IGNORE),
    variants=(IGNORE_INDEX,),
    # A padding id as the ignore index: every target drawn above it, so that only the rows the
    # cases mean to ignore are ignored (as with -100).
    rebuild=lambda v: {"hints": _hints(v["IGNORE_INDEX"]), "look_alikes": _look_alikes(v["IGNORE_INDEX"]),
                       "ranges": {"target": lambda s: (max(0, v["IGNORE_INDEX"] + 1), s["V"])}},
    bench=Bench(
        sizes=({"N": 4096, "V": 32768}, {"N": 4096, "V": 128256}, {"N": 8192, "V": 50257},
               {"N": 16384, "V": 32000}),
        blocks={"B1": 8192},
        launch={"num_warps": 32},
        # Read the fp32 logits once and write dx once, plus target, dloss and loss per row.
        bytes=lambda s: 2 * 4 * s["N"] * s["V"] + (8 + 4 + 4) * s["N"],
        baseline=_eager,
        baseline_name="F.cross_entropy + autograd",
    ),
)
