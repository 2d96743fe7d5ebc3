r"""
# Puzzle 39: Layer norm forward, in Helion

Puzzle 20 again: normalise every row to mean 0 and variance 1, then scale and shift it.

$$\mu_i = \frac{1}{D}\sum_{j} x_{i,j}
\qquad
\sigma_i^2 = \frac{1}{D}\sum_{j} \left(x_{i,j} - \mu_i\right)^2
\qquad
r_i = \frac{1}{\sqrt{\sigma_i^2 + \varepsilon}}
\qquad
y_{i,j} = \left(x_{i,j} - \mu_i\right) r_i \, w_j + b_j$$

with $\varepsilon = 10^{-5}$. `x` and `y` are `(ROWS, D)`, `w` and `b` have length `D`.
The kernel returns `y`, each row's mean `mean` and its **reciprocal** standard deviation
`rstd` (both fp32, length `ROWS`), in that order, as puzzle 20 stored them for the backward.

**What Helion does for you.** In puzzle 20 you padded the row to `BLOCK_D`, a power of two,
loaded it with `other=0.0`, and then had to keep the padding out of the statistics: divide
by `D`, not `BLOCK_D`, and switch the padding lanes off with
`tl.where(cols < D, x - mean, 0.0)` before squaring, because after centring they hold
`-mean`. In Helion a tile of rows is the program and `x[rows, :]` is exactly `D` columns wide:
no padding reaches your arithmetic, so that whole trap is gone. The tile of rows, its tail,
and the stores of the three outputs at the right offsets are Helion's too.

**What is still yours: the statistics and their precision.**

* **Centre first, then square.** $\sigma^2 = E[x^2] - E[x]^2$ is the same on paper, but in
  fp32 it cancels when a row's mean is large next to its spread; one case has rows whose mean
  is 256 times their spread. Compute `xc = row - mean[:, None]` and square that.
* **Divide by D**, the biased variance, as PyTorch's layer norm does.
* **$\varepsilon$ inside the square root**: constant rows have variance 0.
* **rstd, not the standard deviation**: `torch.rsqrt(var + eps)`.
* **fp32 throughout** for fp16 and bf16 inputs: upcast `x`, `w` and `b`, cast `y` to its dtype
  once at the store; `mean` and `rstd` are fp32 outputs.
* **Broadcasting**: `mean` and `rstd` are vectors over the tile's rows; `w` and `b` vectors
  over the columns: `xc * r[:, None] * w[None, :] + b[None, :]`.

**Sizes.** Rows of 5 to 1000 columns, none a power of two but one, in fp32, fp16 and bf16.
"""
import helion
import helion.language as hl
import torch
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Mistake, Puzzle

EPS = 1e-5


def spec(
    x: Float32[Tensor, "ROWS D"], w: Float32[Tensor, "D"], b: Float32[Tensor, "D"]
) -> tuple[Float32[Tensor, "ROWS D"], Float32[Tensor, "ROWS"], Float32[Tensor, "ROWS"]]:
    # In fp32 whatever the inputs, y rounded once to x's dtype at the end; mean and rstd fp32.
    xf = x.float()
    mean = xf.mean(dim=1)
    centred = xf - mean[:, None]
    rstd = torch.rsqrt((centred * centred).mean(dim=1) + EPS)
    y = centred * rstd[:, None] * w.float() + b.float()
    return y.to(x.dtype), mean, rstd


def _normalised_with(x, w, b, mean, var):
    """y, mean and rstd from given statistics (float32), as a wrong kernel would return them."""
    rstd = torch.rsqrt(var + EPS)
    y = (x.float() - mean[:, None]) * rstd[:, None] * w.float() + b.float()
    return y.to(x.dtype), mean, rstd


def _unbiased(x, w, b):  # a look-alike: the variance divided by D - 1
    xf = x.float()
    return _normalised_with(x, w, b, xf.mean(dim=1), xf.var(dim=1, unbiased=True))


def _std_saved(x, w, b):  # a look-alike: the standard deviation returned as rstd
    y, mean, rstd = spec(x, w, b)
    return y, mean, 1.0 / rstd


# ---- your part: finish the kernel ------------------------------------------------
@helion.kernel(autotune_effort="none")
def helion_layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    n_rows, d = x.size()
    y = torch.empty_like(x)
    mean = torch.empty([n_rows], dtype=torch.float32, device=x.device)
    rstd = torch.empty([n_rows], dtype=torch.float32, device=x.device)
    for rows in hl.tile(n_rows):
        # Your code here.
        pass
    return y, mean, rstd
# ----------------------------------------------------------------------------------

HALF = {"x": "float16", "w": "float16", "b": "float16", "y": "float16"}
BF16 = {"x": "bfloat16", "w": "bfloat16", "b": "bfloat16", "y": "bfloat16"}

PUZZLE = Puzzle(
    id="puzzle39",
    title="Layer norm forward, in Helion",
    track="helion",
    statement=__doc__,
    spec=spec,
    kernel="helion_layer_norm",
    kind="helion",
    tiles={"B0": "ROWS"},
    grid=None,  # Helion launches one program per tile of the hl.tile loop
    output=("y", "mean", "rstd"),
    cases=(
        # Tiles of 4 rows on 10: the last tile holds 2.
        Case("classic", sizes={"ROWS": 10, "D": 100}, blocks={"B0": 4}),
        Case("one_row", sizes={"ROWS": 1, "D": 37}, blocks={"B0": 4}, seed=1),
        Case("many_short_rows", sizes={"ROWS": 48, "D": 5}, blocks={"B0": 16}, seed=2),
        # Rows whose mean is 256 times their spread: E[x^2] - E[x]^2 cancels in float32.
        Case("large_mean", sizes={"ROWS": 4, "D": 200}, blocks={"B0": 2}, seed=3, edges={"x": "large_mean"}),
        # Variance 0: rstd is 1/sqrt(eps), and y is b.
        Case("constant_rows", sizes={"ROWS": 3, "D": 40}, blocks={"B0": 2}, seed=4, scale=0.01,
             edges={"x": "constant_rows"}),
        Case("fp16_rows", sizes={"ROWS": 6, "D": 1000}, blocks={"B0": 4}, seed=5, dtypes=HALF),
        Case("bf16_rows", sizes={"ROWS": 6, "D": 300}, blocks={"B0": 4}, seed=6, dtypes=BF16),
        # Past anything a kernel could hard-code: offsets past 16 bits.
        Case("past_16_bit_offsets", sizes={"ROWS": 40, "D": 1000}, blocks={"B0": 8}, seed=7, dtypes=HALF,
             large=True, vary={"ROWS": (34, 48), "D": (980, 1024)}),
    ),
    # Puzzle 20's: fp32 sums in another order than torch's; the large_mean rows lose about 5e-5
    # to the rounding of their mean, the same in any correct kernel.
    atol=1e-4,
    rtol=1e-4,
    tolerances={"float16": (1e-3, 2e-3), "bfloat16": (8e-3, 1.6e-2)},
    hints=(
        "One tile of whole rows: the mean, the variance of the centred rows, then normalise, scale and shift. "
        "Your kernel's outputs are called `mean` and `rstd`: give your locals other names.",
        "`x[rows, :]` upcast to fp32 is the tile of rows, `row`; its mean is `row.sum(dim=1) / d` (or "
        "`torch.mean(row, dim=1)`), a vector over the tile's rows. Call it `mu`, not `mean`: `mean` "
        "is the output tensor.",
        "`xc = row - mu[:, None]`; the variance is `var = (xc * xc).sum(dim=1) / d`, and "
        "`r = torch.rsqrt(var + 1e-5)` is the reciprocal standard deviation (`r`, not `rstd`: `rstd` "
        "is the output tensor).",
        "Store `xc * r[:, None] * w[None, :] + b[None, :]` (with `w` and `b` upcast to fp32), cast to `y.dtype`, "
        "into `y[rows, :]`; then `mean[rows] = mu` and `rstd[rows] = r`.",
    ),
    mistakes=(
        # E[x]^2 subtracted: `- mu * mu`, `- mean ** 2`, and the like.
        Mistake(r"-\s*\(?\s*(\w*(?:mean|mu)\w*)\s*(\*\s*\1\b|\*\*\s*2)",
                "your file subtracts the square of the mean, a variance as E[x²] − E[x]². In float32 that "
                "cancels when a row's mean is large compared to its spread (case large_mean). Centre the row "
                "first, `xc = row - mu[:, None]`, then `var = (xc * xc).sum(dim=1) / d`."),
    ),
    look_alikes=(
        LookAlike("the unbiased variance (divided by D - 1)", _unbiased,
                  "layer norm divides the sum of squares by `D`, as PyTorch's does"),
        LookAlike("the standard deviation returned as rstd", _std_saved,
                  "`rstd` holds 1 / sqrt(var + eps), the factor y is multiplied by: `torch.rsqrt(var + 1e-5)`"),
    ),
    bench=Bench(
        # Puzzle 20's sweep, fp16.
        sizes=({"ROWS": 4096, "D": 8192}, {"ROWS": 4096, "D": 1024}, {"ROWS": 4096, "D": 4096},
               {"ROWS": 16384, "D": 4096}, {"ROWS": 16384, "D": 1024}),
        blocks={"B0": 1},
        launch={"num_warps": 8},
        dtypes=HALF,
        # fp16: read x once and write y once, read w and b; mean and rstd are fp32.
        bytes=lambda s: 2 * 2 * s["ROWS"] * s["D"] + 2 * 2 * s["D"] + 2 * 4 * s["ROWS"],
        baseline=lambda x, w, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS),
        baseline_name="torch.nn.functional.layer_norm",
        compile_baseline=True,
    ),
)
