r"""
# Puzzle 34: Cross-entropy as an autograd function

Wrap your puzzle 23 kernel in a `torch.autograd.Function` that computes what
`torch.nn.functional.cross_entropy(x, target)` does by default: the **mean** loss over the
rows whose target is not -100, and its gradient.

$$L = \frac{1}{n} \sum_{i:\ t_i \ne -100} \left( \mathrm{lse}_i - x_{i,t_i} \right)
\qquad n = \#\{i : t_i \ne -100\}
\qquad \frac{\partial L}{\partial x_{i,j}} = \frac{G}{n} \left( \mathrm{softmax}(x_i)_j - [\,j = t_i\,] \right)$$

for the rows that are not ignored (ignored rows get a gradient of 0), where $G$ is the scalar
`grad_output` that autograd hands to `backward`.

* `forward(ctx, x, target)`: `x` is `(N, V)` logits (fp32, or bf16 in one case), `target` is
  `(N,)` int64. Return the loss, a float32 scalar (shape `()`).
* `backward(ctx, grad_output)`: return `(grad_x, None)`: a class index has no gradient.

**The new idea: the backward is done in the forward.** Puzzle 23's kernel writes every row's
loss and $dx = g_i(\mathrm{softmax} - \mathrm{onehot})$ in one kernel, while the logits are
in cache. Here $g_i = 1/n$ on every row, so the forward can compute the gradient before
anyone asks for it: launch the puzzle 23 kernel with $g_i = 1/n$, save its $dx$ (and
nothing else: not `x`), and let `backward` only multiply it by $G$. Libraries such as Liger
do this, and even write $dx$ over the logits to save the memory. The probabilities are never
stored, and the backward reads $dx$ once.

Three small kernels of your own do the rest, because PyTorch may only allocate and reshape:
no reduction runs on the host here, not even a sum of what your kernels wrote:

1. `mean_weights_kernel`, one program: count the targets that are not -100, and store
   $1/n$ into each of the `N` entries of the float32 vector that puzzle 23's kernel takes as
   `dloss`. (Counting with `(target != -100).sum()` would be PyTorch computing on an input.)
2. then the puzzle 23 kernel, one program per row, writes the per-row losses and $dx$;
3. `weighted_sum_kernel`, one program: the loss, $\sum_i \mathrm{loss}_i \cdot g_i$, into a
   float32 scalar;
4. in `backward`, `scale_kernel`: $\partial L/\partial x = G \cdot dx$, elementwise.

The grader records `CrossEntropyFunc` on tensors without values and replays it (as in
puzzle 15), and checks, for every case: the loss; that the forward and the backward launch
Triton kernels and that no PyTorch operator computes
on `x`, `target`, `grad_output` or your kernels' buffers in their place; that `ctx` saved
nothing but the inputs and one tensor of shape `(N, V)`, the gradient, with memory of its own;
and the gradient of
`x` against PyTorch autograd on `F.cross_entropy`.

The traps the cases spring:

* **The mean is over the rows that count.** Dividing by `N` instead of $n$ is wrong as soon as
  a row is ignored, in the loss and in every gradient.
* **The backward's `grad_output` is not always 1**: the grader hands a random one.
* **bf16 logits**: the loss stays float32, the gradient has `x`'s dtype.
* **Logits a slice**: in one case `x` is a slice of wider logits, its rows apart in memory. Puzzle
  23's kernel reads row `r` at `r * V`: pass it `x.contiguous()` (a copy only where one is needed).
* **Sizes.** One case has 1030 rows: the mean runs over more rows than one
  block of 1024 holds, and a batch draws its sizes within a range, so fit nothing to the sizes you see.
"""
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from jaxtyping import Float32, Int64
from torch import Tensor

from grader.puzzle import Bench, Case, Puzzle, Variant
from puzzle23_cross_entropy import cross_entropy_kernel  # noqa: F401  (your puzzle 23 kernel)

IGNORE = -100

# Puzzle 23's ignore index, the same value for the same student: this wrapper launches that kernel.
IGNORE_INDEX = Variant("IGNORE_INDEX", choices=(-100, *range(16)), default=IGNORE, what="the ignore index",
                       shared_with="puzzle23",
                       also={"CALL": lambda i: "`torch.nn.functional.cross_entropy(x, target)` does by default"
                             if i == -100 else f"`torch.nn.functional.cross_entropy(x, target, ignore_index={i})` does"},
                       stated=("{{CALL}}: the **mean**", "not {{IGNORE_INDEX}}, and its gradient",
                               r"t_i \ne {{IGNORE_INDEX}}", "not {{IGNORE_INDEX}}, and store",
                               "`(target != {{IGNORE_INDEX}}).sum()`"))


def spec(x: Float32[Tensor, "N V"], target: Int64[Tensor, "N"], *, IGNORE_INDEX: int) -> Float32[Tensor, ""]:
    # The mean over the rows whose target is not the ignore index, in float32 whatever x's dtype.
    return F.cross_entropy(x.float(), target, ignore_index=IGNORE_INDEX)


# ---- your part: finish the kernels and the autograd function -----------------------
@triton.jit
def mean_weights_kernel(target_ptr, weights_ptr, N, BLOCK: tl.constexpr):
    # Your code here: one program; weights[i] = 1 / (number of rows not ignored).
    pass


@triton.jit
def weighted_sum_kernel(loss_ptr, weights_ptr, out_ptr, N, BLOCK: tl.constexpr):
    # Your code here: one program; out = sum(loss * weights).
    pass


@triton.jit
def scale_kernel(dx_ptr, grad_output_ptr, grad_x_ptr, NUMEL, BLOCK: tl.constexpr):
    # Your code here: grad_x = grad_output * dx, grad_output a scalar.
    pass


class CrossEntropyFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, target):
        # Your code here.
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        # Your code here.
        raise NotImplementedError
# ----------------------------------------------------------------------------------

IGNORED = {"target": "ignore_index"}


def _hints(ignore: int) -> tuple[str, ...]:
    return (
        "Three small kernels in the forward: one counts the rows that count, one computes every row's loss "
        "and gradient, one takes their weighted sum; the backward only scales the saved gradient.",
        "Forward: `x = x.contiguous()` (x may be a slice whose rows lie apart in memory, and the kernel takes "
        "no row stride), `weights = torch.empty(N, dtype=torch.float32, device=x.device)`, "
        "`mean_weights_kernel[(1,)](target, weights, N, BLOCK=1024)`; then `loss_rows = torch.empty_like(weights)`, "
        "`dx = torch.empty_like(x)`, `cross_entropy_kernel[(N,)](x, target, weights, loss_rows, dx, N, V, B1=...)`; "
        "then `weighted_sum_kernel[(1,)]` into `loss = torch.empty((), dtype=torch.float32, device=x.device)`. "
        "`ctx.save_for_backward(dx)`.",
        f"`mean_weights_kernel`: loop over `target` in chunks, `n += tl.sum((t != {ignore}).to(tl.int32), axis=0)` "
        f"(masked lanes loaded as {ignore}), then a second loop storing `1.0 / n` to every `weights_ptr + i`.",
        "Backward: `(dx,) = ctx.saved_tensors`, `grad_x = torch.empty_like(dx)`, launch `scale_kernel` over "
        "`dx.numel()` elements with `tl.load(grad_output_ptr)` as the factor, and `return grad_x, None`.",
    )


PUZZLE = Puzzle(
    id="puzzle34",
    track="transformer",
    title="Cross-entropy as an autograd function",
    statement=__doc__,
    spec=spec,
    kernel="CrossEntropyFunc",
    kind="function",
    grid=None,
    output="loss",
    ranges={"target": lambda s: (0, s["V"])},
    saves={"dx": "N V"},
    cases=(
        # Rows 0, 3 and 6 are ignored: the mean is over the other five.
        Case("classic", sizes={"N": 8, "V": 200}, blocks={}, edges=IGNORED),
        Case("no_ignored_rows", sizes={"N": 5, "V": 77}, blocks={}, seed=1),
        Case("one_row", sizes={"N": 1, "V": 300}, blocks={}, seed=2),
        Case("many_rows", sizes={"N": 40, "V": 50}, blocks={}, seed=3, edges=IGNORED),
        Case("large_logits", sizes={"N": 4, "V": 130}, blocks={}, seed=4, scale=50.0, edges=IGNORED),
        Case("bf16_logits", sizes={"N": 6, "V": 100}, blocks={}, seed=5, edges=IGNORED,
             dtypes={"x": "bfloat16"}),
        # Past anything a kernel could hard-code: more than 1024 rows, past 16-bit offsets.
        Case("past_1024_rows", sizes={"N": 1030, "V": 33}, blocks={}, seed=6, edges=IGNORED, large=True,
             vary={"N": (1030, 1300), "V": (33, 48)}),
        # A model's vocabulary, a multiple of no block: a kernel that reads one chunk of the row
        # (a block capped at 1024 or 8192 logits, no loop) misses most of it.
        Case("vocabulary", sizes={"N": 4, "V": 32771}, blocks={}, seed=7, large=True, vary={"V": (32769, 40000)}),
        # x a slice of wider logits (a padded vocabulary cut to V): its rows lie 16 elements apart.
        Case("logits_a_slice", sizes={"N": 6, "V": 90}, blocks={}, seed=8, edges=IGNORED,
             layouts={"x": "row_strided"}),
    ),
    # fp32: the loss of order 1 to 100s; the gradient of order 1/(n V) times G.
    atol=1e-6,
    rtol=2e-5,
    # A bf16 gradient is rounded twice (dx, then G * dx): a relative 2 * 2^-9.
    tolerances={"bfloat16": (1e-5, 1.6e-2)},
    hints=_hints(IGNORE),
    variants=(IGNORE_INDEX,),
    # A padding id as the ignore index: every target drawn above it, as puzzle 23 does.
    rebuild=lambda v: {"hints": _hints(v["IGNORE_INDEX"]),
                       "ranges": {"target": lambda s: (max(0, v["IGNORE_INDEX"] + 1), s["V"])}},
    # --bench: forward and backward together against autograd on F.cross_entropy. The forward
    # reads x and writes dx, the backward reads dx and writes grad_x.
    bench=Bench(
        sizes=({"N": 4096, "V": 32768}, {"N": 4096, "V": 128256}, {"N": 16384, "V": 32000}),
        bytes=lambda s: 4 * 4 * s["N"] * s["V"],
        baseline=lambda x, target, *, IGNORE_INDEX: F.cross_entropy(x, target, ignore_index=IGNORE_INDEX),
        baseline_name="F.cross_entropy (autograd)",
    ),
)
