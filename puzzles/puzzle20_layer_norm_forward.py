r"""
# Puzzle 20: Layer norm, forward

Normalise every row of a matrix to mean 0 and variance 1, then scale and shift it by a
learned weight and bias, as every transformer block does before its attention and its MLP:

$$\mu_i = \frac{1}{D}\sum_{j=0}^{D-1} x_{i,j}
\qquad
\sigma_i^2 = \frac{1}{D}\sum_{j=0}^{D-1} \left(x_{i,j} - \mu_i\right)^2
\qquad
r_i = \frac{1}{\sqrt{\sigma_i^2 + \varepsilon}}$$

$$y_{i,j} = \left(x_{i,j} - \mu_i\right) r_i \, w_j + b_j
\qquad \varepsilon = 10^{-5}$$

`x` and `y` have shape `(ROWS, D)`, stored row by row; `w` and `b` have length `D`. Besides
`y`, the kernel stores each row's mean $\mu_i$ in `mean` and its **reciprocal** standard
deviation $r_i$ (`rstd`, not the standard deviation) in `rstd`, both of length `ROWS`.
The backward pass (puzzle 21) reads them instead of going over the row again. $\varepsilon$
is fixed: the kernel's `eps` parameter has it as its default, and the grader never passes
another value.

The grid has `ROWS` programs: program `i` owns row `i`, and the whole row fits in one block
of `BLOCK_D` columns (`D <= BLOCK_D`, `BLOCK_D` a power of two). Rows longer than one block
would need a loop over the row in chunks, as the long-row softmax has; none is needed here.

**What is new: two reductions over one row held in registers.** The mean and then the
variance are both sums over the row. Load the row once, keep it in registers, reduce it
twice, and store `y`: each element is read once and written once, so the kernel is
memory-bound, and at fp16 it can approach the GPU's copy bandwidth.

The traps the cases spring:

* **Padding lanes.** Lanes past `D` are loaded as 0, which adds nothing to a sum, but they
  must not count: divide by `D`, not `BLOCK_D`, and in the variance the padding lanes'
  $(0 - \mu_i)^2$ must be switched off (`tl.where(cols < D, x - mean, 0.0)`).
* **Divide by D.** The variance is the biased one, $\frac{1}{D}$, as PyTorch's layer norm
  uses; not $\frac{1}{D-1}$.
* **Cancellation.** $\sigma^2 = E[x^2] - E[x]^2$ is the same number on paper, but in
  float32 two large, nearly equal numbers are subtracted: a row whose mean is 256 times its
  spread keeps only about 8 of its 24 bits. Subtract the mean first, then square. One case
  has such rows.
* **Constant rows.** A row whose elements are all equal has variance 0: then
  $r_i = 1/\sqrt{\varepsilon} \approx 316.2$ and $y_{i,j} = b_j$. Add $\varepsilon$ inside
  the square root.
* **Half precision.** `x`, `w`, `b` and `y` are fp16 or bf16 in some cases; `mean` and `rstd`
  stay float32. Compute in float32 (`.to(tl.float32)` after each load) and let `tl.store`
  round `y` once.
* **Sizes.** One case has 40 rows of 1000 (offsets past 16 bits), and
  a batch draws its sizes within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Mistake, Puzzle, Variant, tex


# eps: each student of a class graded with a secret gets their own, a few decades wide. The
# constant_rows case tells any two apart (r = 1/sqrt(eps) there); the kernel's `eps` default
# holds it, since the grader never passes one.
EPS_VARIANT = Variant("EPS", choices=(1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3), default=1e-5,
                      what="eps", code="layer_norm_fwd.eps", text=tex, also={"RSTD": lambda eps: f"{eps ** -0.5:.1f}"},
                      stated=(r"\varepsilon = {{EPS}}$$", r"\approx {{RSTD}}$"))


def spec(
    x: Float32[Tensor, "ROWS D"], w: Float32[Tensor, "D"], b: Float32[Tensor, "D"], *, EPS: float
) -> tuple[Float32[Tensor, "ROWS D"], Float32[Tensor, "ROWS"], Float32[Tensor, "ROWS"]]:
    # In fp32 whatever the inputs, y rounded once to x's dtype at the end; mean and rstd fp32.
    xf = x.float()
    mean = xf.mean(dim=1)
    centred = xf - mean[:, None]
    rstd = torch.rsqrt((centred * centred).mean(dim=1) + EPS)
    y = centred * rstd[:, None] * w.float() + b.float()
    return y.to(x.dtype), mean, rstd


def _normalised_with(x, w, b, mean, var, eps):
    """y, mean and rstd from given statistics (float32), as a wrong kernel would write them."""
    rstd = torch.rsqrt(var + eps)
    y = (x.float() - mean[:, None]) * rstd[:, None] * w.float() + b.float()
    return y.to(x.dtype), mean, rstd


def _padded_row(x, w, b, *, sizes, EPS):  # a look-alike: statistics of the row padded with zeros to BLOCK_D
    xf = x.float()
    pad = sizes["BLOCK_D"] - sizes["D"]
    mean = xf.sum(dim=1) / sizes["BLOCK_D"]
    var = (((xf - mean[:, None]) ** 2).sum(dim=1) + pad * mean**2) / sizes["BLOCK_D"]
    return _normalised_with(x, w, b, mean, var, EPS)


def _padding_in_variance(x, w, b, *, sizes, EPS):  # a look-alike: the right mean, padding lanes in the variance
    xf = x.float()
    pad = sizes["BLOCK_D"] - sizes["D"]
    mean = xf.mean(dim=1)
    var = (((xf - mean[:, None]) ** 2).sum(dim=1) + pad * mean**2) / sizes["D"]
    return _normalised_with(x, w, b, mean, var, EPS)


def _unbiased(x, w, b, *, EPS):  # a look-alike: the variance divided by D - 1
    xf = x.float()
    return _normalised_with(x, w, b, xf.mean(dim=1), xf.var(dim=1, unbiased=True), EPS)


def _std_saved(x, w, b, *, EPS):  # a look-alike: the standard deviation stored in rstd
    y, mean, rstd = spec(x, w, b, EPS=EPS)
    return y, mean, 1.0 / rstd


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def layer_norm_fwd(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, ROWS, D,
                   BLOCK_D: tl.constexpr, eps: tl.constexpr = 1e-5):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------

HALF = {"x": "float16", "w": "float16", "b": "float16", "y": "float16"}
BF16 = {"x": "bfloat16", "w": "bfloat16", "b": "bfloat16", "y": "bfloat16"}


def _next_power_of_two(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


PUZZLE = Puzzle(
    id="puzzle20",
    title="Layer norm, forward",
    track="transformer",
    statement=__doc__,
    variants=(EPS_VARIANT,),
    spec=spec,
    kernel="layer_norm_fwd",
    grid=lambda s: (s["ROWS"],),
    output=("y", "mean", "rstd"),
    # The cases name BLOCK_D; the bench leaves it to the width, one block per row.
    derive=lambda s: {} if "BLOCK_D" in s else {"BLOCK_D": _next_power_of_two(s["D"])},
    cases=(
        # 100 columns in a block of 128: 28 padding lanes in every row.
        Case("classic", sizes={"ROWS": 4, "D": 100}, blocks={"BLOCK_D": 128}),
        Case("row_fills_block", sizes={"ROWS": 3, "D": 64}, blocks={"BLOCK_D": 64}, seed=1),
        Case("one_row", sizes={"ROWS": 1, "D": 37}, blocks={"BLOCK_D": 64}, seed=2),
        # Five columns in blocks of eight: three padding lanes in every row.
        Case("many_short_rows", sizes={"ROWS": 48, "D": 5}, blocks={"BLOCK_D": 8}, seed=3),
        # Rows whose mean is 256 times their spread: E[x^2] - E[x]^2 cancels in float32.
        Case("large_mean", sizes={"ROWS": 4, "D": 200}, blocks={"BLOCK_D": 256}, seed=4,
             edges={"x": "large_mean"}),
        # Variance 0: rstd is 1/sqrt(eps). Small values, so that a mean one rounding away
        # from the row's value stays far below the tolerance once multiplied by 316.
        Case("constant_rows", sizes={"ROWS": 3, "D": 40}, blocks={"BLOCK_D": 64}, seed=5, scale=0.01,
             edges={"x": "constant_rows"}),
        Case("fp16_rows", sizes={"ROWS": 6, "D": 1000}, blocks={"BLOCK_D": 1024}, seed=6, dtypes=HALF),
        Case("bf16_rows", sizes={"ROWS": 6, "D": 300}, blocks={"BLOCK_D": 512}, seed=7, dtypes=BF16),
        # Past anything a kernel could hard-code: offsets past 16 bits.
        Case("past_16_bit_offsets", sizes={"ROWS": 40, "D": 1000}, blocks={"BLOCK_D": 1024}, seed=8,
             dtypes=HALF, large=True, vary={"ROWS": (34, 48), "D": (980, 1024)}),
        # A model's width in one block, and rows past 65535 (one program each, a sample of them run).
        Case("model_width", sizes={"ROWS": 40, "D": 8000}, blocks={"BLOCK_D": 8192}, seed=9, large=True,
             vary={"ROWS": (34, 48), "D": (5000, 8191)}),
        Case("rows_past_65535", sizes={"ROWS": 65600, "D": 13}, blocks={"BLOCK_D": 16}, seed=10, large=True,
             vary={"ROWS": (65536, 70000)}),
    ),
    # fp32: two sums of a few hundred terms in another order than torch's; the large_mean rows
    # lose about 5e-5 to the rounding of their mean, the same in any correct kernel.
    atol=1e-4,
    rtol=1e-4,
    # One rounding of y to the output's dtype (a relative 2^-11 or 2^-8), either side of a tie.
    tolerances={"float16": (1e-3, 2e-3), "bfloat16": (8e-3, 1.6e-2)},
    hints=(
        "One program per row: the mean, then the variance of the centred row (never the mean of the squares "
        "minus the squared mean), then normalise, scale and shift, and save the two statistics.",
        "Program `i` loads `x_ptr + i * D + cols` with `cols = tl.arange(0, BLOCK_D)`, `mask = cols < D` "
        "and `other=0.0`, then `.to(tl.float32)`. The mean is `tl.sum(x, axis=0) / D`.",
        "Centre the row and switch the padding lanes off before squaring: "
        "`xc = tl.where(mask, x - mean, 0.0)`, `var = tl.sum(xc * xc, axis=0) / D`, "
        "`rstd = 1 / tl.sqrt(var + eps)`.",
        "Load `w` and `b` with the same mask, store `xc * rstd * w + b` to `y_ptr + i * D + cols` with the "
        "mask, and the two scalars with `tl.store(mean_ptr + i, mean)` and `tl.store(rstd_ptr + i, rstd)`.",
    ),
    mistakes=(
        # E[x]^2 subtracted: `- mean * mean`, `- mean ** 2`, and the like.
        Mistake(r"-\s*\(?\s*(\w*mean\w*)\s*(\*\s*\1\b|\*\*\s*2)",
                "your file subtracts the square of the mean, a variance as E[x²] − E[x]². In float32 that "
                "cancels when a row's mean is large compared to its spread (case large_mean). Centre the row "
                "first, `xc = tl.where(cols < D, x - mean, 0.0)`, then `var = tl.sum(xc * xc, axis=0) / D`."),
    ),
    look_alikes=(
        LookAlike("a layer norm of the row padded with zeros to BLOCK_D (mean and variance divided by "
                  "BLOCK_D, padding lanes counted)", _padded_row,
                  "padding lanes are not part of the row: divide the sums by `D`, and in the variance "
                  "switch them off with `tl.where(cols < D, x - mean, 0.0)`"),
        LookAlike("a variance that counts the padding lanes' (0 - mean)^2", _padding_in_variance,
                  "after `x - mean` the padding lanes hold `-mean`: switch them off with "
                  "`tl.where(cols < D, x - mean, 0.0)` before squaring"),
        LookAlike("the unbiased variance (divided by D - 1)", _unbiased,
                  "layer norm divides the sum of squares by `D`, as PyTorch's does"),
        LookAlike("the standard deviation stored in rstd", _std_saved,
                  "`rstd` holds 1 / sqrt(var + eps), the factor y is multiplied by"),
    ),
    bench=Bench(
        sizes=({"ROWS": 4096, "D": 8192}, {"ROWS": 4096, "D": 1024}, {"ROWS": 4096, "D": 4096},
               {"ROWS": 16384, "D": 4096}, {"ROWS": 16384, "D": 1024}),
        # BLOCK_D follows D (derive above).
        blocks={},
        launch={"num_warps": 8},
        dtypes=HALF,
        # fp16: read x once and write y once, read w and b; mean and rstd are fp32.
        bytes=lambda s: 2 * 2 * s["ROWS"] * s["D"] + 2 * 2 * s["D"] + 2 * 4 * s["ROWS"],
        baseline=lambda x, w, b, *, EPS: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS),
        baseline_name="torch.nn.functional.layer_norm",
        compile_baseline=True,
    ),
)
