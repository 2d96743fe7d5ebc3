r"""
# Puzzle 15: The weighted sum as an autograd function

Wrap your weighted-sum kernels in a `torch.autograd.Function`, so that the weighted sum
works inside any PyTorch model, for inputs with **any number of leading dimensions**:

$$y_{\dots} = \sum_{d=0}^{D-1} x_{\dots, d}\, w_d, \qquad
\frac{\partial L}{\partial x_{\dots, d}} = g_{\dots}\, w_d, \qquad
\frac{\partial L}{\partial w_d} = \sum_{\dots} g_{\dots}\, x_{\dots, d}$$

where $g = \partial L / \partial y$ is the `grad_output` that autograd hands to `backward`.

* `forward(ctx, x, weight)`: `x` has shape `(*batch, D)`, `weight` has shape `(D,)`. Flatten
  the leading dimensions into rows (`x.reshape(-1, D)`, or `einops.rearrange(x, "... d -> (...) d")`),
  launch `weighted_sum_fwd`, and return the result reshaped to `x.shape[:-1]`. Save what the
  backward needs with `ctx.save_for_backward`.
* `backward(ctx, grad_output)`: launch `weighted_sum_bwd` on the flattened rows, sum its
  per-tile partial buffer over the tiles on the host, and return one gradient per input of
  `forward`, each with its input's shape: `(grad_x, grad_weight)`.

The grader runs your forward and backward once on tensors that have each case's shapes,
strides and dtypes but no values, recording what they do (PyTorch's operators and your
launches), then replays the recording on the real inputs. So a wrapper works from `.shape`,
`.stride()` and `.dtype` only: reading a value on the host (`.item()`, an `if` on a tensor,
`.numpy()`) fails with its line. Then it checks, for every case:

1. the output's shape, dtype and values;
2. that both the forward and the backward launch Triton kernels, and that no PyTorch
   operator computes on `x` or `weight` in their place: PyTorch may allocate and reshape,
   and make one reduction, the last step of `grad_weight`: `partial.sum(0)` over the
   backward kernel's per-tile partial rows (at most 1024 of them, so a tile sums several rows
   when there are more). Every other sum, in the forward or of `grad_x`, is your kernels';
3. that `ctx` saved only inputs (`x` and `weight`): anything else can be recomputed, and
   a tensor stored as a plain attribute of `ctx` escapes autograd's bookkeeping;
4. both gradients against PyTorch autograd on the spec.

Use whichever kernels you wrote: puzzles 13 and 14 (block pointers) or puzzles 16 and 17
(tensor descriptors). Both pairs take the same arguments, and both are imported below. On
triton 3.9 and later, block pointers are gone (`tl.make_block_ptr` raises), so use 16 and 17
there. A descriptor kernel on a GPU needs scratch memory for the descriptors it builds: call
`triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))`
once before launching it.

**Going further: the host's share of a step.** On a GPU, `python -m grader puzzle15 --bench`
times a whole step (forward and backward) and the same step replayed as a CUDA graph, which
leaves the host out. At 65536 x 1024 the kernels need about 0.2 ms, and issuing them (autograd's
bookkeeping, two launches, three allocations, one sum) keeps the host busy for nearly as long.
When the two figures differ, the step is *host-bound*: a faster kernel gains nothing, fewer or
cheaper host calls do. One cheaper call, from Triton's fused-softmax tutorial: compile once with
`handle = kernel.warmup(*args, grid=(1,), **meta)` and launch with `handle[grid](*args, *constexprs)`,
which skips the work `kernel[grid](...)` repeats on every call to pick the compiled version. A
handle fits only arguments that Triton would compile the same way (same dtypes, pointers with the
same 16-byte alignment, the same integers equal to 1 or divisible by 16), so keep one per such key.
The interpreter compiles nothing (`warmup` returns `None` there): launch the plain way then.

**Sizes.** One case has 1100 rows: the weight's gradient sums more rows than one block of
1024 holds.
"""
import torch
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, Puzzle
from puzzle13_weighted_sum_forward import weighted_sum_fwd  # noqa: F401  (your puzzle 13 kernel)
from puzzle14_weighted_sum_backward import weighted_sum_bwd  # noqa: F401  (your puzzle 14 kernel)
from puzzle16_weighted_sum_forward_descriptors import weighted_sum_fwd_desc  # noqa: F401  (puzzle 16)
from puzzle17_weighted_sum_backward_descriptors import weighted_sum_bwd_desc  # noqa: F401  (puzzle 17)


def _rows(sizes) -> int:
    rows = 1
    for n in sizes["batch"]:
        rows *= n
    return rows


def spec(x: Float32[Tensor, "*batch D"], weight: Float32[Tensor, "D"]) -> Float32[Tensor, "*batch"]:
    return x @ weight


# ---- your part: finish the autograd function ---------------------------------------
class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        # Your code here.
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        # Your code here.
        raise NotImplementedError
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle15",
    title="Weighted sum, autograd wrapper",
    track="cs336",
    statement=__doc__,
    spec=spec,
    kernel="WeightedSumFunc",
    kind="function",
    grid=None,
    output="y",
    host_reductions={"weight": 1024},  # partial.sum(0): the statement's one reduction on the host
    cases=(
        Case("classic", sizes={"batch": (4, 50), "D": 96}, blocks={}),
        Case("one_leading_dim", sizes={"batch": (300,), "D": 64}, blocks={}, seed=1),
        # grad_output arrives non-contiguous (its dims in reverse memory order), as the statement warns.
        Case("three_leading_dims_with_tails", sizes={"batch": (2, 3, 17), "D": 130}, blocks={}, seed=2,
             layouts={"grad_output": "transposed"}),
        Case("classic", sizes={"batch": (4, 50), "D": 96}, blocks={}, seed=3),
        # "Any number of leading dims" includes none: x is (D,) and the output 0-d.
        Case("no_leading_dims", sizes={"batch": (), "D": 40}, blocks={}, seed=4),
        # Past anything a kernel could hard-code: more than 1024 rows, past 16-bit offsets.
        Case("many_rows", sizes={"batch": (1100,), "D": 40}, blocks={}, seed=5, large=True),
        # x a slice of a wider tensor (a model's activations often are): its rows lie 16 elements
        # apart, and reshape(-1, D) keeps those strides for the kernels to use.
        Case("x_a_slice", sizes={"batch": (3, 5), "D": 96}, blocks={}, seed=6, layouts={"x": "row_strided"}),
    ),
    atol=1e-4,
    rtol=1e-4,
    # --bench: forward and backward together against PyTorch autograd. Any implementation reads
    # x twice (the forward, and grad_weight) and writes grad_x once.
    bench=Bench(
        sizes=({"batch": (65536,), "D": 1024}, {"batch": (4096,), "D": 1024}, {"batch": (16384,), "D": 1024},
               {"batch": (262144,), "D": 1024}, {"batch": (64, 1024), "D": 1024}),
        # grad_weight sums up to 262144 rows at the sweep's sizes: rounding there is far above
        # a graded case's; a wrong gradient is off by whole values.
        tolerances={"float32": (1e-2, 1e-4)},
        bytes=lambda s: 4 * (3 * _rows(s) * s["D"] + 3 * _rows(s) + 2 * s["D"]),
    ),
    hints=(
        "The forward flattens `x` to rows, launches puzzle 13's kernel and gives the output `x`'s leading "
        "shape back; the backward launches puzzle 14's, then finishes the weight's gradient from its partial "
        "rows.",
        "Keep `x.shape` before flattening: the output is `y.view(x.shape[:-1])` and the gradient "
        "`grad_x.view(x.shape)`.",
        "The number of row tiles is `triton.cdiv(rows, ROWS_TILE_SIZE)`: allocate the partial buffer "
        "`(tiles, D)` with `torch.empty`, and `partial.sum(0)` is `grad_weight`.",
        "`grad_output` may arrive non-contiguous: `grad_output.reshape(-1)` gives one value per row.",
    ),
)
