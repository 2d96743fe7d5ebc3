r"""
# Puzzle 16: Weighted sum, forward (tensor descriptors)

Puzzle 13 again, $y = x\,w$ over the last dimension of `x`:

$$y_i = \sum_{j=0}^{D-1} x_{i,j} \, w_j \qquad i = 0, \dots, ROWS - 1$$

with the same shapes (`x` is `ROWS x D`, `weight` has length `D`, `output` has length
`ROWS`, all float32), the same grid (`cdiv(ROWS, ROWS_TILE_SIZE)` programs, program `i`
owning rows `i * ROWS_TILE_SIZE ...`) and the same parameters, under a new kernel name.

**What is new: tensor descriptors**, the successor of block pointers (triton 3.9 removed
`tl.make_block_ptr`). A descriptor describes the *whole* tensor and the tile shape once;
each load then names the tile's first element:

```python
x_desc = tl.make_tensor_descriptor(
    x_ptr,
    shape=[ROWS, D],                          # the whole tensor, for the edge handling
    strides=[x_stride_row, 1],                # in elements; the last one must be the literal 1
    block_shape=[ROWS_TILE_SIZE, D_TILE_SIZE],  # the tile: constexpr powers of two
)
tile = x_desc.load([row_start, col_start])    # element coordinates of the tile's corner
x_desc.store([row_start, col_start], tile)    # (for an output)
```

Compared with puzzle 13: there is no `offsets` and no `tl.advance` (each load takes its own
coordinates, so a loop just computes them), no `order`, and no `boundary_check`: a load
always reads the elements outside `shape` as zeros, and a store always skips them.

**Why the rules are stricter: TMA.** On Hopper GPUs (H100, H200) a descriptor load is done
by the TMA unit, a copy engine that moves a whole tile between global and shared memory on
its own. It only handles tensors whose **last dimension is contiguous** (stride 1, which
Triton must know when it compiles the kernel: write the literal `1`. Passing `x_stride_dim`
works too, but only because Triton turns an integer argument equal to 1 into a constant at
compile time; a stride of any other value there is refused) and
whose **base address and every other stride are multiples of 16 bytes**; the tile's last
dimension must span at least 16 bytes too. So this puzzle has no column-major case, and in
every case `D` is a multiple of 4 (4 float32 = 16 bytes, so each row of `x` starts 16-byte
aligned); `ROWS` and `D` still need not be multiples of the tiles. The interpreter checks the
same rules, and also wants each load's last coordinate to be a multiple of 16 bytes: keep
`col_start` a multiple of `D_TILE_SIZE`.

**The vectors.** `x` must be read through a descriptor; that is the point of the puzzle.
For `weight` and `output` the solution uses plain pointers with masks, as in puzzle 7.
A 1-D descriptor (`shape=[D]`, `strides=[1]`, `block_shape=[D_TILE_SIZE]`) loads `weight`
correctly too, but do not *store* `output` through one: on an H200 (triton 3.6), a 1-D
descriptor store over a length that is not a multiple of 16 bytes (one case has `ROWS = 37`) also wrote
the elements just past the end, up to the next 16 bytes. The interpreter does not show this;
the grader's GPU run reports it as an out-of-bounds store.

**On a GPU.** A descriptor made inside a kernel is written to a small scratch buffer in
global memory, so a launch needs `triton.set_allocator(...)` once beforehand (the grader
does this; see the Triton docs for `set_allocator`). That per-program set-up has a cost:
at `ROWS = 65536`, `D = 1024` on an H200 this kernel reached about 88% of copy bandwidth
with the `classic` case's tiles (`ROWS_TILE_SIZE = 64`, `D_TILE_SIZE = 64`: fewer, bigger
programs) and about 85% with puzzle 13's 16 x 256, where block pointers reach about 90%.

**Sizes.** One case has 1100 rows, and a batch draws its sizes within a range, so fit
nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle, cdiv, seeds


def spec(x: Float32[Tensor, "ROWS D"], weight: Float32[Tensor, "D"]) -> Float32[Tensor, "ROWS"]:
    return (x * weight[None, :]).sum(dim=-1)


def _tile_index_rows(x, weight, *, sizes):  # a look-alike: x_desc.load([pid, d]), a tile index as a row
    rows, tile = torch.arange(x.shape[0]), sizes["ROWS_TILE_SIZE"]
    padded = torch.cat([spec(x, weight), torch.zeros(1)])  # rows past ROWS load as zeros
    return padded[(rows // tile + rows % tile).clamp(max=x.shape[0])]


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def weighted_sum_fwd_desc(
    x_ptr, weight_ptr, output_ptr,
    x_stride_row, x_stride_dim, weight_stride_dim, output_stride_row,
    ROWS, D,
    ROWS_TILE_SIZE: tl.constexpr, D_TILE_SIZE: tl.constexpr,
):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle16",
    title="Weighted sum, forward (tensor descriptors)",
    track="cs336",
    statement=__doc__,
    spec=spec,
    kernel="weighted_sum_fwd_desc",
    grid=lambda s: (cdiv(s["ROWS"], s["ROWS_TILE_SIZE"]),),
    output="output",
    strides={
        "x": ("x_stride_row", "x_stride_dim"),
        "weight": ("weight_stride_dim",),
        "output": ("output_stride_row",),
    },
    # Every x is contiguous with D a multiple of 4: TMA needs 16-byte aligned row strides.
    cases=(
        # The tiles one would also use on a GPU; exact multiples, several D steps.
        *seeds(Case("classic", sizes={"ROWS": 128, "D": 256},
                    blocks={"ROWS_TILE_SIZE": 64, "D_TILE_SIZE": 64}), 1),
        # Neither size is a multiple of its tile: the last program's rows and the last D
        # step's columns stick out.
        *seeds(Case("tails", sizes={"ROWS": 100, "D": 200},
                    blocks={"ROWS_TILE_SIZE": 16, "D_TILE_SIZE": 64}, seed=2), 3),
        # An odd ROWS, a short last D step of 4 columns.
        Case("short_last_step", sizes={"ROWS": 37, "D": 36}, blocks={"ROWS_TILE_SIZE": 8, "D_TILE_SIZE": 16},
             seed=4),
        # D shorter than one tile, ROWS shorter than one tile: one program, one step.
        Case("smaller_than_tiles", sizes={"ROWS": 5, "D": 12}, blocks={"ROWS_TILE_SIZE": 8, "D_TILE_SIZE": 16},
             seed=5),
        # Past anything a kernel could hard-code: more than 1024 rows, past 16-bit offsets.
        Case("many_rows", sizes={"ROWS": 1100, "D": 40}, blocks={"ROWS_TILE_SIZE": 64, "D_TILE_SIZE": 64},
             seed=6, large=True, vary={"ROWS": (1030, 1300)}),
    ),
    # fp32 sums of a few hundred products, added in another order than torch's.
    requires=("make_tensor_descriptor",),
    # --bench: x is read once; w and the output are small. PyTorch's way is a tensordot.
    bench=Bench(
        sizes=({"ROWS": 65536, "D": 1024}, {"ROWS": 4096, "D": 1024}, {"ROWS": 16384, "D": 1024},
                      {"ROWS": 262144, "D": 1024}, {"ROWS": 65536, "D": 256}),
        blocks={"ROWS_TILE_SIZE": 8, "D_TILE_SIZE": 1024},
        launch={"num_warps": 8, "num_stages": 4},
        bytes=lambda s: 4 * (s["ROWS"] * s["D"] + s["D"] + s["ROWS"]),
        baseline=lambda x, weight: torch.tensordot(x, weight, dims=1),
        baseline_name="torch.tensordot",
    ),
    atol=1e-4,
    rtol=1e-4,
    hints=(
        "Puzzle 13 with a tensor descriptor instead of a block pointer: made once, it loads a tile at element "
        "coordinates, and fills with zeros past its shape.",
        "Make `x`'s descriptor once, before the loop: `shape=[ROWS, D]`, "
        "`strides=[x_stride_row, 1]`, `block_shape=[ROWS_TILE_SIZE, D_TILE_SIZE]`. Write the "
        "literal `1`: `x_stride_dim` also compiles here only because Triton treats an argument equal "
        "to 1 as a constant, and a kernel that relies on that breaks for any other stride.",
        "`for d in range(0, D, D_TILE_SIZE):` load `x_desc.load([pid * ROWS_TILE_SIZE, d])`: "
        "coordinates count elements, not tiles.",
        "Load the weights and store the output with plain pointers and masks (`cols < D`, "
        "`rows < ROWS`); the x tile needs no mask, the descriptor zero-fills past its shape.",
    ),
    look_alikes=(
        LookAlike("the weight ignored (plain row sums of x)", lambda x, weight: x.sum(dim=-1),
                  "multiply the tile that `x_desc.load(...)` gives by the matching `D_TILE_SIZE` weights before the sum: "
                  "`tl.sum(x * w[None, :], axis=1)`"),
        LookAlike("the program id used as a row coordinate (a tile index, not an element index)",
                  _tile_index_rows,
                  "descriptor coordinates count elements: load `x_desc.load([pid * ROWS_TILE_SIZE, d])`"),
    ),
)
