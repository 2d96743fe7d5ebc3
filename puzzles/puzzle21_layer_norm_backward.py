r"""
# Puzzle 21: Layer norm, backward

The backward pass of puzzle 20. Given the gradient $dy = \partial L / \partial y$ of a loss,
produce the gradients with respect to the input and to the weight and bias. With the row's
saved statistics, $\hat{x}_{i,j} = (x_{i,j} - \mu_i)\, r_i$ is the normalised input, and:

$$dx_{i,j} = r_i \left( w_j\, dy_{i,j}
  \;-\; \frac{1}{D}\sum_{k} w_k\, dy_{i,k}
  \;-\; \hat{x}_{i,j} \cdot \frac{1}{D}\sum_{k} w_k\, dy_{i,k}\, \hat{x}_{i,k} \right)$$

$$dw_j = \sum_{i=0}^{ROWS-1} dy_{i,j}\, \hat{x}_{i,j}
\qquad\qquad
db_j = \sum_{i=0}^{ROWS-1} dy_{i,j}$$

The two means inside $dx$ come from $\mu_i$ and $r_i$ being functions of the whole row: moving
one $x_{i,k}$ moves the mean and the spread, and so every $y_{i,j}$ of the row.

Inputs: `x` and `dy` of shape `(ROWS, D)`, `w` of length `D`, and `mean` and `rstd` of length
`ROWS`, the statistics puzzle 20 saved (always float32). Read them: do not recompute them.

**What is new: a reduction across programs in two stages.** $dx$ needs whole rows, as the
forward did, but $dw$ and $db$ are sums over *all* rows, and a program that added into one
shared `dw` would race with the others. So the grid has `NP = cdiv(ROWS, ROWS_PER_PROGRAM)`
programs; program `p` owns rows `p * ROWS_PER_PROGRAM` up to the next program's first (the
last program may have fewer, down to one), and:

1. for each of its rows, computes and stores that row of `dx`, and adds $dy\,\hat{x}$ and
   $dy$ into two running vectors of length `BLOCK_D`, kept in registers;
2. after its last row, stores those vectors as row `p` of `partial_dw` and `partial_db`, each of
   shape `(NP, D)` and float32 whatever the inputs.

The host then sums the partial rows, `partial_dw.sum(dim=0)`: the grader does it for you and
compares the result with $dw$ (an autograd wrapper would do the same, or launch a second small
kernel for it). Each row of `D` columns fits in one block of `BLOCK_D` (`D <= BLOCK_D`, a power
of two). On a GPU, few programs, each going over many rows, keep the partial buffers small;
the backward then moves little more than `x`, `dy` and `dx` once.

The traps the cases spring:

* **The last program.** `ROWS` is not always a multiple of `ROWS_PER_PROGRAM`: rows past the
  end do not exist, and must be neither read nor written.
* **Padding lanes.** Lanes past `D` must add nothing to the two sums over the row. Loaded as
  0, `w * dy` is 0 there, but $\hat{x}$ is $(0 - \mu)\,r$: switch it off with `tl.where`.
* **Every partial row is written,** even by a program with a single row. Keep the running sums
  in registers (`tl.zeros`): the partial buffers hold garbage until the kernel stores to them.
* **Half precision.** In some cases `x`, `w`, `dy` and `dx` are fp16 or bf16; `mean`, `rstd`
  and the partial buffers stay float32. Compute in float32.
* **Sizes.** One case has 200 rows of 200 (offsets past 16 bits), and
  a batch draws its sizes within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle, cdiv

EPS = 1e-5  # puzzle 20's


def spec(
    x: Float32[Tensor, "ROWS D"], w: Float32[Tensor, "D"], dy: Float32[Tensor, "ROWS D"],
    mean: Float32[Tensor, "ROWS"], rstd: Float32[Tensor, "ROWS"],
) -> tuple[Float32[Tensor, "ROWS D"], Float32[Tensor, "D"], Float32[Tensor, "D"]]:
    # Autograd of puzzle 20's forward, written out; float32 whatever the inputs.
    xhat, wdy = _normalised(x, mean, rstd), w.float() * dy.float()
    c1 = (wdy * xhat).mean(dim=1, keepdim=True)
    c2 = wdy.mean(dim=1, keepdim=True)
    dx = (wdy - xhat * c1 - c2) * rstd[:, None]
    return dx.to(x.dtype), (dy.float() * xhat).sum(dim=0), dy.float().sum(dim=0)


def _normalised(x, mean, rstd):
    return (x.float() - mean[:, None]) * rstd[:, None]


def statistics_of_x(x, w, dy, mean, rstd):
    """The grader's random mean and rstd replaced by those of x, as puzzle 20 saves them."""
    xf = x.float()
    mu = xf.mean(dim=1)
    return x, w, dy, mu, torch.rsqrt(((xf - mu[:, None]) ** 2).mean(dim=1) + EPS)


def sum_partials(partial: Tensor) -> Tensor:
    """The host's share: add up the programs' partial rows, (NP, D) -> (D,)."""
    return partial.sum(dim=0)


def _dw_over_columns(x, w, dy, mean, rstd):  # a look-alike: dw summed along each row, not down the rows
    dx, _, db = spec(x, w, dy, mean, rstd)
    total = (dy.float() * _normalised(x, mean, rstd)).sum()
    return dx, total.expand(x.shape[1]).clone(), db


def _dx_without(term):
    def wrong(x, w, dy, mean, rstd):  # a look-alike: dx without one of its two mean terms
        _, dw, db = spec(x, w, dy, mean, rstd)
        xhat, wdy = _normalised(x, mean, rstd), w.float() * dy.float()
        if term == "xhat":
            dx = (wdy - wdy.mean(dim=1, keepdim=True)) * rstd[:, None]
        else:
            dx = (wdy - xhat * (wdy * xhat).mean(dim=1, keepdim=True)) * rstd[:, None]
        return dx.to(x.dtype), dw, db
    return wrong


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def layer_norm_bwd(x_ptr, w_ptr, dy_ptr, mean_ptr, rstd_ptr, dx_ptr, partial_dw_ptr, partial_db_ptr,
                   ROWS, D, BLOCK_D: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------

HALF = {"x": "float16", "w": "float16", "dy": "float16", "dx": "float16"}
BF16 = {"x": "bfloat16", "w": "bfloat16", "dy": "bfloat16", "dx": "bfloat16"}


def _derive(s):
    sizes = {"NP": cdiv(s["ROWS"], s["ROWS_PER_PROGRAM"])}
    if "BLOCK_D" not in s:  # the bench: one block per row
        sizes["BLOCK_D"] = 1 << max(0, s["D"] - 1).bit_length()
    return sizes


PUZZLE = Puzzle(
    id="puzzle21",
    title="Layer norm, backward",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="layer_norm_bwd",
    grid=lambda s: (cdiv(s["ROWS"], s["ROWS_PER_PROGRAM"]),),
    output=("dx", "partial_dw", "partial_db"),
    allocate={"partial_dw": "NP D", "partial_db": "NP D"},
    derive=_derive,
    host_reduce={"partial_dw": sum_partials, "partial_db": sum_partials},
    prepare=statistics_of_x,
    cases=(
        # Three programs of four rows; 100 columns in a block of 128.
        Case("classic", sizes={"ROWS": 12, "D": 100}, blocks={"BLOCK_D": 128, "ROWS_PER_PROGRAM": 4}),
        # The last program has two rows of four.
        Case("last_program_short", sizes={"ROWS": 10, "D": 64}, blocks={"BLOCK_D": 64, "ROWS_PER_PROGRAM": 4},
             seed=1),
        Case("one_row", sizes={"ROWS": 1, "D": 37}, blocks={"BLOCK_D": 64, "ROWS_PER_PROGRAM": 4}, seed=2),
        # As many programs as rows: sixteen partial rows, three padding lanes in each row.
        Case("one_row_per_program", sizes={"ROWS": 16, "D": 5}, blocks={"BLOCK_D": 8, "ROWS_PER_PROGRAM": 1},
             seed=3),
        Case("many_rows", sizes={"ROWS": 61, "D": 24}, blocks={"BLOCK_D": 32, "ROWS_PER_PROGRAM": 8}, seed=4),
        # Variance 0: rstd = 1/sqrt(eps), about 316, and x - mean is 0.
        Case("constant_rows", sizes={"ROWS": 6, "D": 40}, blocks={"BLOCK_D": 64, "ROWS_PER_PROGRAM": 2}, seed=5,
             scale=0.01, edges={"x": "constant_rows"}),
        Case("fp16_rows", sizes={"ROWS": 7, "D": 300}, blocks={"BLOCK_D": 512, "ROWS_PER_PROGRAM": 3}, seed=6,
             dtypes=HALF),
        Case("bf16_rows", sizes={"ROWS": 8, "D": 200}, blocks={"BLOCK_D": 256, "ROWS_PER_PROGRAM": 4}, seed=7,
             dtypes=BF16),
        # Past anything a kernel could hard-code: hundreds of rows, past 16-bit offsets.
        Case("hundreds_of_rows", sizes={"ROWS": 200, "D": 200}, blocks={"BLOCK_D": 256, "ROWS_PER_PROGRAM": 8},
             seed=8, large=True, vary={"ROWS": (180, 260), "D": (190, 256)}),
    ),
    # fp32 sums of up to a few hundred terms, in another order than torch's.
    atol=1e-4,
    rtol=1e-4,
    # dx rounded once to its dtype; the partial buffers are float32.
    tolerances={"float16": (1e-3, 2e-3), "bfloat16": (8e-3, 1.6e-2)},
    hints=(
        "Follow the statement's formulas one row at a time: `dx` needs two sums along the row, while the "
        "weight's and bias's gradients are sums over rows, kept per program and written once as a partial "
        "row.",
        "Program `p` goes over rows `p * ROWS_PER_PROGRAM` to `tl.minimum(p * ROWS_PER_PROGRAM + "
        "ROWS_PER_PROGRAM, ROWS)` with a `for` loop. Before it: `w` once, and `dw = tl.zeros([BLOCK_D], "
        "dtype=tl.float32)`, `db` likewise.",
        "Per row: load `x` and `dy` (masked, `.to(tl.float32)`) and the two scalars `mean_ptr + row`, "
        "`rstd_ptr + row`; `xhat = tl.where(mask, (x - mean) * rstd, 0.0)`, `wdy = w * dy`, "
        "`c1 = tl.sum(xhat * wdy, axis=0) / D`, `c2 = tl.sum(wdy, axis=0) / D`.",
        "Store `(wdy - (xhat * c1 + c2)) * rstd` as the row of `dx`; `dw += dy * xhat` and `db += dy` "
        "(vectors: summed over rows, not along the row). After the loop, "
        "`tl.store(partial_dw_ptr + p * D + cols, dw, mask=mask)`, and `db` likewise.",
    ),
    look_alikes=(
        LookAlike("dw summed along each row (over the columns) instead of down the rows", _dw_over_columns,
                  "`dw` is a vector with one entry per column: add `dy * xhat` itself to it for each row, "
                  "not `tl.sum(dy * xhat, axis=0)`, which sums a row's columns into one number"),
        LookAlike("dx without the xhat * mean(w * dy * xhat) term", _dx_without("xhat"),
                  "the spread depends on every x of the row too: subtract "
                  "`xhat * tl.sum(xhat * w * dy, axis=0) / D` inside the bracket"),
        LookAlike("dx without the mean(w * dy) term", _dx_without("mean"),
                  "the mean depends on every x of the row: subtract `tl.sum(w * dy, axis=0) / D` "
                  "inside the bracket"),
    ),
    bench=Bench(
        sizes=({"ROWS": 4096, "D": 8192}, {"ROWS": 4096, "D": 1024}, {"ROWS": 4096, "D": 4096},
               {"ROWS": 16384, "D": 4096}, {"ROWS": 16384, "D": 1024}),
        # BLOCK_D follows D (derive above); 4096 rows make 128 programs, about one per SM.
        blocks={"ROWS_PER_PROGRAM": 32},
        launch={"num_warps": 16},
        dtypes=HALF,
        # fp16: read x and dy and write dx once; w, the statistics, and dw and db in float32.
        bytes=lambda s: 3 * 2 * s["ROWS"] * s["D"] + 2 * s["D"] + 2 * 4 * s["ROWS"] + 2 * 4 * s["D"],
        # PyTorch's own layer-norm backward kernel (what autograd calls), all three gradients.
        baseline=lambda x, w, dy, mean, rstd: torch.ops.aten.native_layer_norm_backward(
            dy, x, [x.shape[-1]], mean[:, None], rstd[:, None], w, w, [True, True, True]),
        baseline_name="aten.native_layer_norm_backward",
    ),
)
