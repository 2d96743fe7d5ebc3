r"""
# Puzzle 17: Weighted sum, backward (tensor descriptors)

Puzzle 14 again, the backward pass of $y = x\,w$, now with the tensor descriptors of
puzzle 16. Given $g = \partial L / \partial y$:

$$\frac{\partial L}{\partial x_{i,j}} = g_i \, w_j
\qquad\qquad
P_{t,j} = \sum_{i \in \text{tile } t} x_{i,j} \, g_i$$

Same shapes (`x` and `grad_x` are `ROWS x D`, `weight` has length `D`, `grad_output` has
length `ROWS`, the scratch buffer $P$, `partial_grad_weight`, is `NT x D` with
`NT = cdiv(ROWS, ROWS_TILE_SIZE)`), same grid (`NT` programs, program `t` owning row tile
`t`), same parameters as puzzle 14, under a new kernel name. The grader adds the rows of
`partial_grad_weight` on the host and compares the sum with $\partial L / \partial w$;
every element of the scratch buffer must be written.

**What is new: storing through descriptors.** `desc.store([row, col], tile)` writes a
whole tile; elements outside the descriptor's `shape` are skipped, so the last program's
rows past `ROWS` never reach `grad_x`. A descriptor's `block_shape` may have a dim of 1:
a `[1, D_TILE_SIZE]` block over the `(NT, D)` scratch buffer takes one tile's row of
partials (store `partial[None, :]`). `NT` is not a parameter; `tl.num_programs(0)` is it.

**The TMA rules of puzzle 16 hold for every descriptor:** last dimension contiguous (its
stride written as the literal `1`), base address and other strides multiples of 16 bytes,
the tile's last dim at least 16 bytes. Hence every case has contiguous tensors and `D` a
multiple of 4, while `ROWS` and `D` need not be multiples of the tiles. `x` must go through a
descriptor; the solution also stores `grad_x` and the partials through descriptors, and
reads the two vectors, `weight` and `grad_output`, with plain masked pointers (a 1-D
descriptor would load them correctly, but see puzzle 16 on 1-D descriptor stores).

**On a GPU.** As in puzzle 16, a launch needs `triton.set_allocator(...)` once for the
descriptors' scratch space (the grader does this). At `ROWS = 65536`, `D = 1024` on an
H200 the `classic` case's tiles (`ROWS_TILE_SIZE = 32`, `D_TILE_SIZE = 256`) reached about
86% of copy bandwidth, where puzzle 14's block pointers reach about 90%.

**Sizes.** One case has 1100 rows, and a batch draws its sizes within a range, so fit
nothing to the sizes you see.
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


def sum_row_tiles(partial_grad_weight: Tensor) -> Tensor:
    """The host's share of the work: add up the per-row-tile partials, (NT, D) -> (D,)."""
    return partial_grad_weight.sum(dim=0)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def weighted_sum_bwd_desc(
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
    id="puzzle17",
    title="Weighted sum, backward (tensor descriptors)",
    track="cs336",
    statement=__doc__,
    spec=spec,
    kernel="weighted_sum_bwd_desc",
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
    # Every tensor is contiguous with D a multiple of 4: TMA needs 16-byte aligned row strides.
    cases=(
        # The tiles one would also use on a GPU; exact multiples, several D steps.
        *seeds(Case("classic", sizes={"ROWS": 128, "D": 512},
                    blocks={"ROWS_TILE_SIZE": 32, "D_TILE_SIZE": 256}), 1),
        # Neither size is a multiple of its tile; the last tile has 4 real rows of 16.
        *seeds(Case("tails", sizes={"ROWS": 100, "D": 200},
                    blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 64}, seed=2), 3),
        # An odd ROWS, a short last D step of 4 columns.
        Case("short_last_step", sizes={"ROWS": 37, "D": 36}, blocks={"ROWS_TILE_SIZE": 8, "D_TILE_SIZE": 16},
             seed=4),
        # Tall and thin: many row tiles (many partial rows), one short D step each.
        Case("many_row_tiles", sizes={"ROWS": 300, "D": 12}, blocks={"ROWS_TILE_SIZE": 32, "D_TILE_SIZE": 16},
             seed=5),
        # Past anything a kernel could hard-code: more than 1024 rows, past 16-bit offsets.
        Case("many_rows", sizes={"ROWS": 1100, "D": 40}, blocks={"ROWS_TILE_SIZE": 64, "D_TILE_SIZE": 16},
             seed=6, large=True, vary={"ROWS": (1030, 1300)}),
    ),
    # fp32 sums of up to a few hundred products, added in another order than torch's.
    requires=("make_tensor_descriptor",),
    # --bench: x is read once and grad_x written once; the rest is small. PyTorch's way is
    # the spec: an outer product for grad_x and a matrix-vector product for grad_weight.
    bench=Bench(
        sizes=({"ROWS": 65536, "D": 1024}, {"ROWS": 4096, "D": 1024}, {"ROWS": 16384, "D": 1024},
                      {"ROWS": 262144, "D": 1024}, {"ROWS": 65536, "D": 256}),
        blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 512},
        launch={"num_warps": 4, "num_stages": 4},
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
        "Puzzle 14 with descriptors: one for each 2-D tensor, made before the loop, the scratch buffer's with "
        "one row per program.",
        "Three descriptors, made before the loop: `x` and `grad_x` with block "
        "`[ROWS_TILE_SIZE, D_TILE_SIZE]`, and the scratch buffer with "
        "`shape=[tl.num_programs(0), D]`, block `[1, D_TILE_SIZE]`; every last stride is `1`.",
        "Load this tile's `grad_output` once with a masked plain load (`other=0.0`). In the D loop "
        "store `g[:, None] * w[None, :]` at `[pid * ROWS_TILE_SIZE, d]` of `grad_x` and "
        "`tl.sum(x * g[:, None], axis=0)[None, :]` at `[pid, d]` of the scratch buffer.",
    ),
    look_alikes=(
        LookAlike("grad_weight without grad_output (plain column sums of x)",
                  lambda x, weight, grad_output: (grad_output[:, None] * weight[None, :], x.sum(dim=0)),
                  "each row of x enters grad_weight scaled by its grad_output: the partial of a row tile "
                  "is `tl.sum(x * g[:, None], axis=0)`"),
        LookAlike("grad_x without grad_output (every row the weight itself)",
                  lambda x, weight, grad_output: (weight.expand(x.shape).clone(), spec(x, weight, grad_output)[1]),
                  "the chain rule scales the weight by each row's grad_output: `g[:, None] * w[None, :]`"),
    ),
)
