r"""
# Puzzle 13: Weighted sum, forward (block pointers)

Multiply every row of a matrix `x` by one weight vector `w` and add up the products: a
matrix-vector product, `y = x @ w`, over the last dimension of `x`.

$$y_i = \sum_{j=0}^{D-1} x_{i,j} \, w_j \qquad i = 0, \dots, ROWS - 1$$

Shapes: `x` is `ROWS x D`, `weight` has length `D`, `output` has length `ROWS`; all float32.
This kernel is the first half of a small custom autograd function (puzzle 14 writes its
backward, puzzle 15 wraps both for PyTorch).

The grid is one-dimensional with `cdiv(ROWS, ROWS_TILE_SIZE)` programs. Program `i` owns
the rows `i * ROWS_TILE_SIZE` up to `i * ROWS_TILE_SIZE + ROWS_TILE_SIZE - 1` (the last
program's rows may run past `ROWS`) and walks along `D` in steps of `D_TILE_SIZE`
columns, as in puzzle 7. Neither `ROWS` nor `D` need be a multiple of its tile.

**Strides.** `x` is not always stored row by row: one case hands you a column-major `x`
(a transposed view). The kernel receives every tensor's strides, counted in elements:
element `(r, c)` of `x` is at `x_ptr + r * x_stride_row + c * x_stride_dim`, element `j`
of `weight` at `weight_ptr + j * weight_stride_dim`, element `r` of `output` at
`output_ptr + r * output_stride_row`. Use them; never assume `x_stride_dim == 1`.

**What is new: block pointers.** Instead of building a grid of offsets and a mask by hand,
describe the tile once and let Triton do the address arithmetic and the edge checks:

```python
x_block_ptr = tl.make_block_ptr(
    x_ptr,                                  # base: element (0, 0) of the whole tensor
    shape=(ROWS, D),                        # the whole tensor's size, for the edge checks
    strides=(x_stride_row, x_stride_dim),   # elements to step for +1 along each dim
    offsets=(row_start, 0),                 # where this tile starts, in elements
    block_shape=(ROWS_TILE_SIZE, D_TILE_SIZE),  # the tile: constexpr powers of two
    order=(1, 0),                           # dims from fastest- to slowest-varying in memory
)
```

* `tl.load(block_ptr, boundary_check=(0, 1), padding_option="zero")` reads the tile;
  `boundary_check` lists the dims whose edge may be crossed: elements past `shape` there
  are not read and come back as `padding_option`. Leave a dim out only where the tile can
  never cross its edge. `tl.store(block_ptr, value, boundary_check=...)` writes the same way.
* `tl.advance(block_ptr, (0, D_TILE_SIZE))` returns a block pointer moved by that many
  elements along each dim; it does not change the one you pass, so reassign it in the loop.
* A vector is a block pointer with one dim: `shape=(D,)`, `strides=(weight_stride_dim,)`,
  `block_shape=(D_TILE_SIZE,)`, `order=(0,)`.
* `order` is only a hint about which dim is contiguous; the strides decide the addresses.

In each step, load a `(ROWS_TILE_SIZE, D_TILE_SIZE)` tile of `x` and the matching
`D_TILE_SIZE` slice of the weights, and add `tl.sum(x_tile * w_tile[None, :], axis=1)`
into a float32 accumulator of length `ROWS_TILE_SIZE`. Store it once, after the loop.

**Block pointers are on their way out.** Triton now prefers *tensor descriptors*
(`tl.make_tensor_descriptor`, puzzle 16), which also map onto the Hopper TMA copy engine;
triton 3.9 removed `tl.make_block_ptr`. The ideas (a described tile, padding at the edges)
carry over unchanged.

**On a GPU.** This kernel reads `x` once and does little arithmetic, so memory bandwidth
bounds it. For large inputs (say `ROWS = 65536`, `D = 1024`) the `classic` case's tiles,
`ROWS_TILE_SIZE = 16` by `D_TILE_SIZE = 256`, move data at about 90% of the bandwidth of a
plain device-to-device copy on an H200; other tiles between 8 x 64 and 64 x 256 reach 83-90%.

**Sizes.** One case has 1100 rows and a column-major `x`, and a batch draws its sizes within
a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle, cdiv, seeds


def spec(x: Float32[Tensor, "ROWS D"], weight: Float32[Tensor, "D"]) -> Float32[Tensor, "ROWS"]:
    return (x * weight[None, :]).sum(dim=-1)


def _row_major(x, weight, *, layouts):  # a look-alike: x read at r * D + c whatever its strides
    if layouts.get("x") == "transposed":
        x = x.t().reshape(x.shape)  # what a column-major x's memory holds, read row by row
    return (x * weight[None, :]).sum(dim=-1)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def weighted_sum_fwd(
    x_ptr, weight_ptr, output_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, output_stride_row,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle13",
    title="Weighted sum, forward (block pointers)",
    track="cs336",
    statement=__doc__,
    spec=spec,
    kernel="weighted_sum_fwd",
    grid=lambda s: (cdiv(s["ROWS"], s["ROWS_TILE_SIZE"]),),
    output="output",
    strides={
        "x": ("x_stride_row", "x_stride_dim"),
        "weight": ("weight_stride_dim",),
        "output": ("output_stride_row",),
    },
    cases=(
        # The tiles one would also use on a GPU; exact multiples, several D steps.
        *seeds(Case("classic", sizes={"ROWS": 64, "D": 512},
                    blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 256}), 1),
        # Neither size is a multiple of its tile: the last program's rows and the last D
        # step's columns stick out.
        *seeds(Case("tails", sizes={"ROWS": 100, "D": 200},
                    blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 64}, seed=2), 3),
        # x stored column-major: only kernels that use x_stride_row and x_stride_dim pass.
        Case("transposed", sizes={"ROWS": 72, "D": 40}, blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 16},
             seed=4, layouts={"x": "transposed"}),
        # D shorter than one tile, ROWS shorter than one tile: one program, one masked step.
        Case("smaller_than_tiles", sizes={"ROWS": 5, "D": 7}, blocks={"ROWS_TILE_SIZE": 8, "D_TILE_SIZE": 16},
             seed=5),
        # Past anything a kernel could hard-code: more than 1024 rows, a column-major x past 16-bit offsets.
        Case("many_rows", sizes={"ROWS": 1100, "D": 40}, blocks={"ROWS_TILE_SIZE": 64, "D_TILE_SIZE": 16},
             seed=6, layouts={"x": "transposed"}, large=True, vary={"ROWS": (1030, 1300)}),
        # x a slice of a wider tensor: each row starts 16 elements past the previous row's end, and
        # only x_stride_row tells (a kernel indexing `r * D` reads the gaps).
        Case("x_a_slice", sizes={"ROWS": 40, "D": 40}, blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 16},
             seed=7, layouts={"x": "row_strided"}),
    ),
    # fp32 sums of a few hundred products, added in another order than torch's.
    requires=("make_block_ptr",),
    instead="puzzle16",
    # --bench: x is read once; w and the output are small. PyTorch's way is a tensordot.
    # Tiles, warps and register cap from benchmarks/tuning/weighted_sum_forward_tiles.py on an H200: with a cap, the
    # compiler keeps every load of a 4 x 1024 tile in flight at once (93 % of copy against 90 %).
    bench=Bench(
        sizes=({"ROWS": 65536, "D": 1024}, {"ROWS": 4096, "D": 1024}, {"ROWS": 16384, "D": 1024},
               {"ROWS": 262144, "D": 1024}, {"ROWS": 65536, "D": 256}),
        blocks={"ROWS_TILE_SIZE": 4, "D_TILE_SIZE": 1024},
        launch={"num_warps": 8, "num_stages": 1, "maxnreg": 128},
        bytes=lambda s: 4 * (s["ROWS"] * s["D"] + s["D"] + s["ROWS"]),
        baseline=lambda x, weight: torch.tensordot(x, weight, dims=1),
        baseline_name="torch.tensordot",
    ),
    atol=1e-4,
    rtol=1e-4,
    hints=(
        "A block pointer carries its tensor's shape and strides: make one per tensor before the loop, move it "
        "along the row with `tl.advance`, and let its boundary check do the masking.",
        "Before the loop, make three block pointers: `x` at offsets `(pid * ROWS_TILE_SIZE, 0)` "
        "with block `(ROWS_TILE_SIZE, D_TILE_SIZE)`, `weight` at `(0,)` with block `(D_TILE_SIZE,)`, "
        "and `output` at `(pid * ROWS_TILE_SIZE,)` with block `(ROWS_TILE_SIZE,)`; pass the stride "
        "arguments as their `strides`.",
        "`for _ in range(tl.cdiv(D, D_TILE_SIZE)):` load both tiles with `boundary_check` on every "
        "dim that can stick out and `padding_option=\"zero\"`, accumulate, then "
        "`x_block_ptr = tl.advance(x_block_ptr, (0, D_TILE_SIZE))` and the weight's by `(D_TILE_SIZE,)`.",
        "Store with `tl.store(output_block_ptr, acc, boundary_check=(0,))`: the last program's "
        "rows past `ROWS` must not be written.",
    ),
    look_alikes=(
        LookAlike("the weight ignored (plain row sums of x)", lambda x, weight: x.sum(dim=-1),
                  "multiply each tile of `x` by the matching `D_TILE_SIZE` weights before the sum: "
                  "`tl.sum(x * w[None, :], axis=1)`"),
        LookAlike("x read as if row-major (its strides ignored)", _row_major,
                  "address x through the strides you are given, `x_stride_row` and `x_stride_dim` "
                  "(in `tl.make_block_ptr(..., strides=(x_stride_row, x_stride_dim), ...)`): "
                  "a transposed x has `x_stride_row == 1`"),
    ),
)
