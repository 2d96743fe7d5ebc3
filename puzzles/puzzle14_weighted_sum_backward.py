r"""
# Puzzle 14: Weighted sum, backward (block pointers)

The backward pass of puzzle 13's $y = x\,w$. Given the gradient $g = \partial L / \partial y$
of some loss with respect to the output, produce the gradients with respect to both inputs:

$$\frac{\partial L}{\partial x_{i,j}} = g_i \, w_j
\qquad\qquad
\frac{\partial L}{\partial w_j} = \sum_{i=0}^{ROWS-1} x_{i,j} \, g_i$$

Shapes: `x` is `ROWS x D`, `weight` has length `D`, `grad_output` has length `ROWS`;
`grad_x` is `ROWS x D`; all float32. `grad_x` is an outer product, one value per element.
The weight's gradient is a sum over **all** rows, and that is the hard part.

The grid is one-dimensional with `NT = cdiv(ROWS, ROWS_TILE_SIZE)` programs; program `i`
owns rows `i * ROWS_TILE_SIZE ...` as in puzzle 13 and walks along `D` in steps of
`D_TILE_SIZE`. Each step, it writes its `(ROWS_TILE_SIZE, D_TILE_SIZE)` tile of `grad_x`
and the `D_TILE_SIZE` slice of the weight gradient *restricted to its own rows*.

**What is new: a reduction across programs, finished on the host.** No program sees every
row, so none can write the weight gradient alone, and programs that added into the same
vector would race (atomics could fix that, at a cost and in a nondeterministic order).
Instead, each program writes its own row of a scratch buffer $P$, `partial_grad_weight`,
of shape `NT x D`:

$$P_{t,j} = \sum_{i \in \text{tile } t} x_{i,j} \, g_i
\qquad t = 0, \dots, NT - 1$$

and the host adds those rows afterwards, `partial_grad_weight.sum(dim=0)`, as the autograd
wrapper of puzzle 15 will. The grader does that sum for you and compares the result. Every
element of the scratch buffer must be written: the last program's rows past `ROWS` load as
zeros and add nothing, but its row of partials is still stored.

The kernel receives every tensor's strides in elements (as in puzzle 13, `x` is
column-major in one case); `partial_grad_weight`'s are `partial_grad_weight_stride_tile`
(from one tile's row to the next) and `partial_grad_weight_stride_dim`. It does not receive
`NT`; `tl.num_programs(0)` equals it. Keep using block pointers (`tl.make_block_ptr`,
`boundary_check`, `tl.advance`): a store through a block pointer with `boundary_check`
writes only the elements inside `shape`.

**On a GPU.** This kernel reads `x` once and writes `grad_x` once, so it too is bound by
memory bandwidth. The `classic` case's tiles (`ROWS_TILE_SIZE = 16`, `D_TILE_SIZE = 256`)
move data at about 90% of copy bandwidth at `ROWS = 65536`, `D = 1024` on an H200; a larger
`ROWS_TILE_SIZE` makes the partial buffer, and the host's sum, smaller.

**Sizes.** One case has 1100 rows and a column-major `x`, and a batch draws its sizes within
a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle, cdiv, seeds


def spec(
    x: Float32[Tensor, "ROWS D"], weight: Float32[Tensor, "D"], grad_output: Float32[Tensor, "ROWS"]
) -> tuple[Float32[Tensor, "ROWS D"], Float32[Tensor, "D"]]:
    grad_x = grad_output[:, None] * weight[None, :]
    grad_weight = (x * grad_output[:, None]).sum(dim=0)
    return grad_x, grad_weight


def _grad_x_with_x_strides(x, weight, grad_output, *, layouts):  # a look-alike: grad_x stored with x's strides
    grad_x, grad_weight = spec(x, weight, grad_output)
    if layouts.get("x") == "transposed":
        grad_x = grad_x.t().reshape(grad_x.shape)  # stored column-major, read back row by row
    return grad_x, grad_weight


def sum_row_tiles(partial_grad_weight: Tensor) -> Tensor:
    """The host's share of the work: add up the per-row-tile partials, (NT, D) -> (D,)."""
    return partial_grad_weight.sum(dim=0)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def weighted_sum_bwd(
    x_ptr, weight_ptr, grad_output_ptr, grad_x_ptr, partial_grad_weight_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, grad_output_stride_row,
    grad_x_stride_row, grad_x_stride_dim,
    partial_grad_weight_stride_tile, partial_grad_weight_stride_dim,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle14",
    title="Weighted sum, backward (block pointers)",
    track="cs336",
    statement=__doc__,
    spec=spec,
    kernel="weighted_sum_bwd",
    grid=lambda s: (cdiv(s["ROWS"], s["ROWS_TILE_SIZE"]),),
    output=("grad_x", "partial_grad_weight"),
    allocate={"partial_grad_weight": "NT D"},
    derive=lambda s: {"NT": cdiv(s["ROWS"], s["ROWS_TILE_SIZE"])},
    host_reduce={"partial_grad_weight": sum_row_tiles},
    strides={
        "x": ("x_stride_row", "x_stride_dim"),
        "weight": ("weight_stride_dim",),
        "grad_output": ("grad_output_stride_row",),
        "grad_x": ("grad_x_stride_row", "grad_x_stride_dim"),
        "partial_grad_weight": ("partial_grad_weight_stride_tile", "partial_grad_weight_stride_dim"),
    },
    cases=(
        # The tiles one would also use on a GPU; exact multiples, several D steps.
        *seeds(Case("classic", sizes={"ROWS": 64, "D": 512},
                    blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 256}), 1),
        # Neither size is a multiple of its tile; the last tile has 4 real rows of 16.
        *seeds(Case("tails", sizes={"ROWS": 100, "D": 200},
                    blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 64}, seed=2), 3),
        # x stored column-major: only kernels that use x's strides pass.
        Case("transposed", sizes={"ROWS": 72, "D": 40}, blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 16},
             seed=4, layouts={"x": "transposed"}),
        # Tall and thin: many row tiles (many partial rows), one short D step each.
        Case("many_row_tiles", sizes={"ROWS": 300, "D": 12}, blocks={"ROWS_TILE_SIZE": 32, "D_TILE_SIZE": 16},
             seed=5),
        # Past anything a kernel could hard-code: more than 1024 rows, a column-major x past 16-bit offsets.
        Case("many_rows", sizes={"ROWS": 1100, "D": 40}, blocks={"ROWS_TILE_SIZE": 64, "D_TILE_SIZE": 16},
             seed=6, layouts={"x": "transposed"}, large=True, vary={"ROWS": (1030, 1300)}),
        # x a slice of a wider tensor: each row starts 16 elements past the previous row's end, and
        # only x_stride_row tells (a kernel indexing `r * D` reads the gaps).
        Case("x_a_slice", sizes={"ROWS": 40, "D": 40}, blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 16},
             seed=7, layouts={"x": "row_strided"}),
    ),
    # fp32 sums of up to a few hundred products, added in another order than torch's.
    requires=("make_block_ptr",),
    instead="puzzle17",
    # --bench: x is read once and grad_x written once; the rest is small. PyTorch's way is
    # the spec: an outer product for grad_x and a matrix-vector product for grad_weight.
    bench=Bench(
        sizes=({"ROWS": 65536, "D": 1024}, {"ROWS": 4096, "D": 1024}, {"ROWS": 16384, "D": 1024},
                      {"ROWS": 262144, "D": 1024}, {"ROWS": 65536, "D": 256}),
        blocks={"ROWS_TILE_SIZE": 32, "D_TILE_SIZE": 1024},
        launch={"num_warps": 8, "num_stages": 2},
        # grad_weight sums up to 262144 rows at the sweep's sizes: rounding there is far above
        # a graded case's; a wrong gradient is off by whole values.
        tolerances={"float32": (1e-2, 1e-4)},
        bytes=lambda s: 4 * (2 * s["ROWS"] * s["D"] + 2 * s["ROWS"] + s["D"]),
        # PyTorch's fastest way: an outer product, and a matrix-vector product (cuBLAS) for
        # grad_weight; the spec's broadcast-and-sum writes a ROWS x D temporary first.
        baseline=lambda x, weight, grad_output: (torch.outer(grad_output, weight), grad_output @ x),
        baseline_name="torch.outer + grad_output @ x",
    ),
    atol=1e-4,
    rtol=1e-4,
    hints=(
        "A program owns a tile of rows: its share of the gradient of `x` is an outer product, and its share "
        "of the weight's gradient is a partial sum over its rows, written to its own row of the scratch "
        "buffer.",
        "Load this tile's `grad_output` once, before the D loop, through a 1-D block pointer at "
        "`(pid * ROWS_TILE_SIZE,)` with `boundary_check=(0,)` and `padding_option=\"zero\"`: rows past "
        "`ROWS` then contribute nothing.",
        "In each D step: `grad_x` tile = `g[:, None] * w[None, :]`, stored with `boundary_check=(0, 1)`; "
        "partial = `tl.sum(x * g[:, None], axis=0)`, a vector of length `D_TILE_SIZE`.",
        "For the partials, a block pointer over the whole `(NT, D)` buffer (`NT` = `tl.num_programs(0)`) "
        "at offsets `(pid, 0)` with block `(1, D_TILE_SIZE)` takes `partial[None, :]`; advance it by "
        "`(0, D_TILE_SIZE)` with the others.",
    ),
    look_alikes=(
        LookAlike("grad_weight without grad_output (plain column sums of x)",
                  lambda x, weight, grad_output: (grad_output[:, None] * weight[None, :], x.sum(dim=0)),
                  "each row of x enters grad_weight scaled by its grad_output: the partial of a row tile "
                  "is `tl.sum(x * g[:, None], axis=0)`"),
        LookAlike("grad_x without grad_output (every row the weight itself)",
                  lambda x, weight, grad_output: (weight.expand(x.shape).clone(), spec(x, weight, grad_output)[1]),
                  "the chain rule scales the weight by each row's grad_output: `g[:, None] * w[None, :]`"),
        LookAlike("grad_x stored with x's strides", _grad_x_with_x_strides,
                  "grad_x's block pointer takes grad_x's own strides, `(grad_x_stride_row, grad_x_stride_dim)`: "
                  "x may be stored column-major while grad_x is row-major"),
    ),
)
