r"""
# Puzzle 22: RMS norm, forward and backward, as an autograd function

The normalisation of LLaMA-style transformers: no mean, no bias, only each row divided by its
root mean square and scaled by a learned weight. For each row $x$ of length $D$:

$$r = \frac{1}{\sqrt{\frac{1}{D}\sum_{k} x_k^2 + \varepsilon}}
\qquad
y_j = x_j \, r \, w_j
\qquad \varepsilon = 10^{-6}$$

and, with $g = \partial L / \partial y$ the gradient autograd hands to `backward` and
$\hat{x} = x\, r$:

$$\frac{\partial L}{\partial x_j} = r \left( w_j\, g_j - \hat{x}_j \cdot \frac{1}{D}\sum_{k} w_k\, g_k\, \hat{x}_k \right)
\qquad
\frac{\partial L}{\partial w_j} = \sum_{\text{rows}} g_j\, \hat{x}_j$$

Write both kernels and the `torch.autograd.Function` that launches them, in this one cell:

* `forward(ctx, x, w)`: `x` has shape `(*batch, D)`, **any number of leading dims** (a batch of
  sequences of tokens is `(batch, seq, D)`), and `w` has shape `(D,)`. Flatten the leading dims
  into rows, launch the forward kernel (one program per row, the whole row in one block, as in
  puzzle 20), and return `y` with `x`'s shape and dtype.
* The forward kernel also stores each row's $r$ in a float32 tensor of shape `(rows,)`. Save
  `x`, `w` and that tensor with `ctx.save_for_backward`, and **nothing else**: $\hat{x}$ and
  $y$ are as large as `x`, and the backward recomputes them from `x` and $r$ in registers,
  which costs less than writing and reading them back.
* `backward(ctx, grad_output)`: launch the backward kernel, which writes the rows of
  $\partial L/\partial x$ and, as in puzzle 21, per-program partial sums of
  $\partial L/\partial w$ (float32, one row per program); sum the partial rows on the host
  (`partial.sum(0)`, then `.to(w.dtype)`), and return `(grad_x, grad_w)`.

The grader records `RMSNormFunc` on tensors without values and replays it (as in puzzle 15),
and checks, for every case: the output; that the forward and the backward launch Triton
kernels and that no PyTorch operator computes on `x`, `w` or `grad_output` in their place (PyTorch may allocate, reshape and cast,
and make one reduction: `partial.sum(0)` over the backward kernel's per-program partial rows of
$\partial L/\partial w$, at most 1024 of them, so a program sums several rows when there are
more; the sums of the forward and of $\partial L/\partial x$ are your kernels'); that `ctx`
saved only `x`, `w` and one float32 tensor of shape `(rows,)`, with memory of its own (a view
of a larger buffer keeps all of it alive); and both gradients against PyTorch autograd on the spec.

The traps the cases spring:

* **Leading dims**: none, one or three; `D` is not a power of two, so mask the padding lanes.
* **$\varepsilon$ matters** where the values are small: in one case $\frac{1}{D}\sum x^2$ is
  about $10^{-6}$, as large as $\varepsilon$ itself. Add it inside the square root.
* **Half precision.** `x`, `w` and `y` (and so the gradients) are fp16 or bf16 in some cases.
  Compute in float32 and round once, when storing; keep $r$ and the partial sums in float32.
* **Sizes.** One case has 1030 rows, more than one block of 1024, and a
  column-major `grad_output` that `reshape(-1, D)` keeps as it is, with its own strides.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, Puzzle, Variant, tex

# eps: each student of a class graded with a secret gets their own, within a decade or so of the
# eps_matters case's mean of squares (1e-6), where any two tell apart. The learner's forward
# passes it to their kernel: the grader never does.
EPS_VARIANT = Variant("EPS", choices=(2e-7, 5e-7, 1e-6, 2e-6, 5e-6, 1e-5), default=1e-6, what="eps", text=tex,
                      also={"EPS_NEAR": lambda eps: "as large as $\\varepsilon$ itself" if eps == 1e-6
                            else "where $\\varepsilon$ still matters"},
                      stated=(r"\varepsilon = {{EPS}}$$", "{{EPS_NEAR}}. Add it inside"))


def _rows(sizes) -> int:
    rows = 1
    for n in sizes["batch"]:
        rows *= n
    return rows


def spec(x: Float32[Tensor, "*batch D"], w: Float32[Tensor, "D"], *, EPS: float) -> Float32[Tensor, "*batch D"]:
    # In fp32 whatever the inputs, rounded once to x's dtype at the end.
    xf = x.float()
    rstd = torch.rsqrt((xf * xf).mean(dim=-1, keepdim=True) + EPS)
    return (xf * rstd * w.float()).to(x.dtype)


# ---- your part: finish the kernels and the autograd function -----------------------
@triton.jit
def rms_norm_fwd(x_ptr, w_ptr, y_ptr, rstd_ptr, D, eps, BLOCK_D: tl.constexpr):
    # Your code here: one program per row.
    pass


@triton.jit
def rms_norm_bwd(x_ptr, w_ptr, grad_y_ptr, rstd_ptr, grad_x_ptr, partial_grad_w_ptr,
                 ROWS, D, ROWS_PER_PROGRAM, BLOCK_D: tl.constexpr):
    # Your code here: one program per group of rows, a partial row of grad_w per program.
    pass


class RMSNormFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        # Your code here.
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        # Your code here.
        raise NotImplementedError
# ----------------------------------------------------------------------------------

HALF = {"x": "float16", "w": "float16", "y": "float16"}
BF16 = {"x": "bfloat16", "w": "bfloat16", "y": "bfloat16"}

PUZZLE = Puzzle(
    id="puzzle22",
    title="RMS norm, forward and backward (autograd)",
    track="transformer",
    statement=__doc__,
    variants=(EPS_VARIANT,),
    spec=spec,
    kernel="RMSNormFunc",
    kind="function",
    grid=None,
    output="y",
    # rows: the leading dims flattened, the length of the saved rstd.
    derive=lambda s: {"ROWS": _rows(s)},
    saves={"rstd": "ROWS"},
    host_reductions={"w": 1024},  # partial.sum(0): the statement's one reduction on the host
    cases=(
        Case("classic", sizes={"batch": (4, 12), "D": 96}, blocks={}),
        Case("one_leading_dim", sizes={"batch": (30,), "D": 64}, blocks={}, seed=1),
        # grad_output arrives non-contiguous (its dims in reverse memory order), as the statement warns.
        Case("three_leading_dims", sizes={"batch": (2, 3, 5), "D": 130}, blocks={}, seed=2,
             layouts={"grad_output": "transposed"}),
        Case("one_row", sizes={"batch": (1,), "D": 37}, blocks={}, seed=3),
        Case("no_leading_dims", sizes={"batch": (), "D": 50}, blocks={}, seed=4),
        # Values about 1e-3: the mean of squares is about 1e-6, as large as eps.
        Case("eps_matters", sizes={"batch": (8,), "D": 100}, blocks={}, seed=5, scale=1e-3),
        Case("fp16", sizes={"batch": (4, 7), "D": 200}, blocks={}, seed=6, dtypes=HALF),
        Case("bf16", sizes={"batch": (6,), "D": 300}, blocks={}, seed=7, dtypes=BF16),
        # Past anything a kernel could hard-code: more than 1024 rows, and a column-major grad_output that
        # reshape(-1, D) keeps as it is (a 2-D view needs no copy).
        Case("many_rows", sizes={"batch": (1030,), "D": 40}, blocks={}, seed=8, large=True,
             layouts={"grad_output": "transposed"}),
        # A model's width: a block capped below the row (512, 1024, 4096 columns) leaves columns out.
        Case("model_width", sizes={"batch": (7,), "D": 8192}, blocks={}, seed=9, large=True, vary={"D": (5000, 8192)}),
        # Rows past 65535, which a GPU refuses on grid axes 1 and 2: a launch of one program per row
        # must put its rows on axis 0. Every program runs, forward and backward: each backward program
        # reads the rstd its rows' forward programs stored, and grad_w is the host's sum of the
        # backward programs' partial rows.
        Case("rows_past_65535", sizes={"batch": (65600,), "D": 8}, blocks={}, seed=11, large=True),
        # x a slice of a wider tensor: each row starts 16 elements past the previous row's end, and
        # reshape(-1, D) keeps those strides (a kernel indexing `row * D` reads the gaps).
        Case("rows_apart_in_memory", sizes={"batch": (3, 5), "D": 1000}, blocks={}, seed=10,
             layouts={"x": "row_strided"}),
    ),
    # fp32: sums of up to a few hundred terms, in another order than autograd's.
    atol=1e-5,
    rtol=1e-4,
    # One rounding to the output's dtype, either side of a tie.
    tolerances={"float16": (1e-3, 2e-3), "bfloat16": (8e-3, 1.6e-2)},
    hints=(
        "Two kernels and a wrapper: the forward divides each row by its root mean square and saves that "
        "factor; the backward recomputes the rest from `x`. Give each kernel contiguous rows.",
        "Forward: `rows = x.reshape(-1, D).contiguous()` (x may be a slice whose rows lie apart in memory: "
        "`reshape` keeps such strides, and the kernel takes none), `y = torch.empty_like(rows)`, "
        "`rstd = torch.empty(rows.shape[0], dtype=torch.float32, device=x.device)`; launch one program per row with `BLOCK_D = "
        "triton.next_power_of_2(D)`, and return `y.view(x.shape)`.",
        "In the forward kernel: `r = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)`; store `x * r * w` and `r`. "
        "In the backward kernel, per row: `xhat = x * r`, `wg = w * g`, "
        "`grad_x = r * (wg - xhat * tl.sum(wg * xhat, axis=0) / D)`, and `dw += g * xhat`.",
        "Backward: `grad_output.reshape(-1, D).contiguous()`: it may arrive column-major, `reshape` may keep its "
        "strides, and the kernel takes none (the copy is allowed); a `(programs, D)` float32 buffer for the "
        "partial rows; return "
        "`grad_x.view(x.shape), partial.sum(0).to(w.dtype)`.",
    ),
    # --bench: forward and backward together against PyTorch autograd on the spec. fp16: the
    # forward reads x and writes y, the backward reads x and grad_y and writes grad_x.
    bench=Bench(
        sizes=({"batch": (4096,), "D": 8192}, {"batch": (4096,), "D": 4096}, {"batch": (16384,), "D": 4096},
               {"batch": (8, 1024), "D": 4096}, {"batch": (4096,), "D": 1024}),
        dtypes=HALF,
        bytes=lambda s: 2 * 5 * _rows(s) * s["D"] + 2 * 2 * s["D"] + 2 * 4 * _rows(s),
        # PyTorch's own RMS norm (fused where the build has the kernel), not the spec's eager ops.
        baseline=lambda x, w, *, EPS: torch.nn.functional.rms_norm(x, (x.shape[-1],), w, EPS),
        baseline_name="F.rms_norm (autograd)",
    ),
)
