r"""
# Puzzle 18: Fused softmax, one row per program

Apply a softmax to every row of a matrix, the way attention scores are normalised.

$$z_{i,j} = \frac{e^{\,x_{i,j} - m_i}}{\sum_{k=0}^{T-1} e^{\,x_{i,k} - m_i}}
\qquad m_i = \max_{k} x_{i,k}$$

`x` and `z` have shape `(N0, T)` and are stored row by row. The grid has `N0` programs:
program `i` owns row `i`, and the whole row fits in one block of `B1` columns
(`T <= B1`, `B1` a power of two). `T` is any length, so the lanes past `T` must be
switched off.

This is the first kernel of a transformer, and it is **memory-bound**: each element is read
once and written once, and the arithmetic is nearly free. PyTorch's eager softmax reaches
about a quarter of the GPU's copy bandwidth on fp16 rows of 8192; a fused kernel that loads
the row once, keeps it in registers, and stores the result once gets close to a copy.

Four details make it right:

* **Padding lanes.** A masked lane must not change the maximum or the sum: load it as
  `-inf`, so that it is never the maximum and `exp(-inf - m)` is exactly 0.
* **Max subtraction.** $e^{x}$ overflows fp32 once $x$ exceeds about 88; subtracting $m_i$
  keeps every exponent at most 0. Some cases have inputs in the hundreds.
* **Half precision.** Transformers keep activations in fp16 or bf16. Load them, compute in
  fp32 (`x.to(tl.float32)`), and store the result in the output's dtype: the spec does the
  same. Cases here run in fp32, fp16 and bf16, each with its own tolerance.
* **Sizes.** One case has 40 rows of 1000 (offsets past 16 bits), and
  a batch draws its sizes within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Mistake, Puzzle


def spec(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
    # In fp32 whatever the input, rounded once to the output's dtype at the end.
    return torch.softmax(x.float(), dim=1).to(x.dtype)


def _padding_counted(x, *, sizes):  # a look-alike: masked lanes loaded as 0, not -inf
    dtype, x = x.dtype, x.float()
    pad = sizes["B1"] - sizes["T"]
    m = x.max(dim=1, keepdim=True).values.clamp(min=0)
    e = torch.exp(x - m)
    wrong = e / (e.sum(dim=1, keepdim=True) + pad * torch.exp(-m))
    if torch.allclose(wrong, torch.softmax(x, dim=1), rtol=1e-3, atol=1e-6):
        return torch.full_like(x, float("nan"), dtype=dtype)  # no padding, or too little to tell apart
    return wrong.to(dtype)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------

HALF = {"x": "float16", "z": "float16"}
BF16 = {"x": "bfloat16", "z": "bfloat16"}

PUZZLE = Puzzle(
    id="puzzle18",
    title="Fused softmax, one row per program",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="softmax_kernel",
    grid=lambda s: (s["N0"],),
    cases=(
        Case("classic", sizes={"N0": 4, "T": 100}, blocks={"B1": 128}),
        Case("row_fills_block", sizes={"N0": 3, "T": 64}, blocks={"B1": 64}, seed=1),
        Case("one_row", sizes={"N0": 1, "T": 37}, blocks={"B1": 64}, seed=2),
        Case("many_short_rows", sizes={"N0": 64, "T": 5}, blocks={"B1": 8}, seed=3),
        # Inputs in the hundreds: exp(x) overflows unless the row maximum is subtracted.
        Case("large_magnitude", sizes={"N0": 4, "T": 50}, blocks={"B1": 64}, seed=4, scale=200.0),
        # Every row all negative and large: a maximum that starts at 0 instead of -inf, or
        # padding loaded as 0, leaves every exp at 0 and divides 0 by 0.
        Case("all_negative", sizes={"N0": 4, "T": 30}, blocks={"B1": 32}, seed=5, scale=200.0,
             edges={"x": "all_negative"}),
        Case("constant_rows", sizes={"N0": 3, "T": 40}, blocks={"B1": 64}, seed=6, edges={"x": "constant_rows"}),
        Case("fp16_rows", sizes={"N0": 8, "T": 1000}, blocks={"B1": 1024}, seed=7, dtypes=HALF),
        Case("bf16_rows", sizes={"N0": 8, "T": 300}, blocks={"B1": 512}, seed=8, dtypes=BF16),
        Case("fp16_large_magnitude", sizes={"N0": 4, "T": 77}, blocks={"B1": 128}, seed=9, scale=30.0, dtypes=HALF),
        # Past anything a kernel could hard-code: offsets past 16 bits.
        Case("past_16_bit_offsets", sizes={"N0": 40, "T": 1000}, blocks={"B1": 1024}, seed=10, dtypes=HALF,
             large=True, vary={"N0": (34, 48), "T": (980, 1024)}),
        # A model's width in one block; a sample of the rows runs (the first two, the last, two drawn).
        Case("model_width", sizes={"N0": 40, "T": 8192}, blocks={"B1": 8192}, seed=11, large=True,
             vary={"N0": (34, 48), "T": (5000, 8192)}),
    ),
    atol=1e-6,
    rtol=1e-5,
    # One rounding of a value in [0, 1] to the output's dtype, plus fp32 arithmetic before it.
    tolerances={"float16": (1e-3, 2e-3), "bfloat16": (8e-3, 1.6e-2)},
    hints=(
        "The row fits in one block: load it whole, with padding that cannot win the maximum; subtract the "
        "maximum, exponentiate, divide by the sum, and store.",
        "Program `i` reads `x_ptr + i * T + cols` with `cols = tl.arange(0, B1)` and "
        "`mask = cols < T`; load with `other=float('-inf')`.",
        "Upcast the loaded row `x` with `.to(tl.float32)`, subtract `tl.max(x, axis=0)`, exponentiate "
        "into `e`, divide by `tl.sum(e, axis=0)`, and store with `mask=cols < T`: `tl.store` casts to "
        "the output's dtype.",
    ),
    mistakes=(
        Mistake(r"other\s*=\s*0(\.0*)?\b",
                "a load in your file uses `other=0`. For a softmax the padding lanes must be "
                "`other=float('-inf')`: a 0 can become the row's maximum and adds `exp(0 - m)` to the sum."),
    ),
    look_alikes=(
        LookAlike("a softmax over the padded row (masked lanes loaded as 0, not -inf)", _padding_counted,
                  "load with `other=float('-inf')`, so that padding lanes add exp(-inf) = 0 to the sum"),
    ),
    bench=Bench(
        # fp16 rows, the headline first; B1 is each row's length rounded up to a power of two.
        sizes=({"N0": 4096, "T": 8192, "B1": 8192}, {"N0": 4096, "T": 1024, "B1": 1024},
               {"N0": 4096, "T": 4096, "B1": 4096}, {"N0": 16384, "T": 4096, "B1": 4096},
               {"N0": 1024, "T": 16384, "B1": 16384}, {"N0": 4096, "T": 3000, "B1": 4096}),
        blocks={},
        launch={"num_warps": 16},
        dtypes=HALF,
        # Read x once, write z once, two bytes each.
        bytes=lambda s: 2 * 2 * s["N0"] * s["T"],
        baseline=lambda x: torch.softmax(x, dim=1),
        baseline_name="torch.softmax",
        compile_baseline=True,
    ),
)
