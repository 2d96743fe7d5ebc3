r"""
# Puzzle 30: Matmul with a fused epilogue: bias and GELU

A linear layer of a transformer's feed-forward block: a matmul, a bias added to every
column, and the GELU activation, in its tanh form:

$$x_{i,j} = \sum_{k=0}^{K-1} a_{i,k}\, b_{k,j} \;+\; \mathrm{bias}_j
\qquad
c_{i,j} = \mathrm{GELU}(x_{i,j}) = \tfrac12\, x_{i,j}\Bigl(1 + \tanh\bigl(\sqrt{2/\pi}\,(x_{i,j} + 0.044715\, x_{i,j}^3)\bigr)\Bigr)$$

`a` is `M × K`, `b` is `K × N`, `bias` has `N` elements (one per **column** of `c`: it
is indexed by `j`, and broadcast down the rows), and `c` is `M × N`; all fp16, `a`, `b` and
`c` with the strides the kernel receives, `bias` contiguous. Everything is computed in fp32
and `c` is rounded to fp16 once, at the store. The grid and the tiling are puzzle 28's: one
program per `BLOCK_M × BLOCK_N` tile of `c`, numbered in groups of `GROUP_M` tile-rows.

**The new idea: the epilogue.** Without fusion, the matmul writes `x` to memory, a second
kernel reads it back, adds the bias and writes it again, and a third applies the GELU: at
8192 × 8192 in fp16 that is four extra passes over 128 MB. Fused, the bias and the GELU are
applied to the tile while it is still in registers, once the K loop has finished, and only
`c` is written: the epilogue costs almost nothing next to the matmul.

The order is everything:

* **After the loop.** The accumulator holds a partial sum until the last K chunk is added:
  the bias and the GELU go after the loop, never inside it.
* **Bias, then GELU.** GELU is not linear: `GELU(x) + bias` is not `GELU(x + bias)`.
* **Per column.** Load `bias` at the tile's column offsets (`offs_n`, masked with
  `offs_n < N`) and add it as `bias[None, :]`.
* **The tanh form**, not the exact GELU with `erf`: they differ by up to 5·10⁻⁴, and the
  cases are tight enough to tell them apart where `x` is between -4 and -2.
* **No `tanh` needed.** Triton has `tl.exp` and `tl.sigmoid`; use
  $\tfrac12\,(1 + \tanh u) = \sigma(2u) = 1 / (1 + e^{-2u})$, so that
  $\mathrm{GELU}(x) = x \,/\, (1 + e^{-2u})$ with $u = \sqrt{2/\pi}\,(x + 0.044715\,x^3)$.
  For very negative `x`, $e^{-2u}$ overflows to `inf` and the quotient is `-0.0`, which is
  the right limit (the interpreter warns about the overflow; capping $-2u$ at 80 keeps it
  quiet and changes nothing in fp16).

**Sizes.** One case has `K` of 560 (18 chunks), a column-major `b`, and a batch draws its
sizes within a range, so fit nothing to the sizes you see.
"""
import math

import torch
import triton
import triton.language as tl
from jaxtyping import Float16
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Mistake, Puzzle, cdiv


def _gelu(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


def spec(a: Float16[Tensor, "M K"], b: Float16[Tensor, "K N"], bias: Float16[Tensor, "N"]) -> Float16[Tensor, "M N"]:
    # In fp32 throughout, rounded once to fp16 at the end.
    x = a.float() @ b.float() + bias.float()
    return torch.nn.functional.gelu(x, approximate="tanh").to(torch.float16)


def _erf_gelu(a, b, bias):  # a look-alike: the exact GELU, with erf
    return torch.nn.functional.gelu(a.float() @ b.float() + bias.float()).to(torch.float16)


def _gelu_before_bias(a, b, bias):  # a look-alike: GELU(a b) + bias
    return (_gelu(a.float() @ b.float()) + bias.float()).to(torch.float16)


def _bias_per_row(a, b, bias):  # a look-alike: bias[i] added to row i
    m = a.shape[0]
    if m > bias.shape[0]:  # then bias[i] reads past the bias: an out-of-bounds load, nothing to look like
        return spec(a, b, bias)
    return _gelu(a.float() @ b.float() + bias.float()[:m, None]).to(torch.float16)


def _epilogue_in_loop(a, b, bias, *, sizes):  # a look-alike: acc = GELU(acc + bias) after every chunk
    acc = torch.zeros(a.shape[0], b.shape[1])
    for k in range(0, sizes["K"], sizes["BLOCK_K"]):
        acc = _gelu(acc + a[:, k:k + sizes["BLOCK_K"]].float() @ b[k:k + sizes["BLOCK_K"], :].float() + bias.float())
    return acc.to(torch.float16)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def matmul_bias_gelu_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


def _blocks(m, n, k, group):
    return {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": group}


SQRT_2_OVER_PI = math.sqrt(2 / math.pi)

PUZZLE = Puzzle(
    id="puzzle30",
    title="Matmul with a fused epilogue: bias and GELU",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="matmul_bias_gelu_kernel",
    output="c",
    grid=lambda s: (cdiv(s["M"], s["BLOCK_M"]) * cdiv(s["N"], s["BLOCK_N"]),),
    strides={"a": ("stride_am", "stride_ak"), "b": ("stride_bk", "stride_bn"), "c": ("stride_cm", "stride_cn")},
    cases=(
        # Fewer rows than columns, tails everywhere, four K chunks.
        Case("classic", sizes={"M": 40, "N": 72, "K": 100}, blocks=_blocks(32, 32, 32, 2)),
        Case("single_tile", sizes={"M": 32, "N": 32, "K": 64}, blocks=_blocks(32, 32, 32, 2), seed=1),
        # One K chunk; more rows than columns, so a bias read per row runs past its end.
        Case("k_smaller_than_block", sizes={"M": 48, "N": 40, "K": 10}, blocks=_blocks(32, 32, 32, 2), seed=2),
        # 5 x 3 tiles in bands of 2 tile-rows, the last band short.
        Case("short_last_group", sizes={"M": 80, "N": 40, "K": 40}, blocks=_blocks(16, 16, 16, 2), seed=3),
        Case("b_column_major", sizes={"M": 36, "N": 72, "K": 56}, blocks=_blocks(32, 32, 32, 2), seed=4,
             layouts={"b": "transposed"}),
        # Past anything a kernel could hard-code: 18 or more chunks of K, a column-major b past 16-bit offsets.
        Case("many_chunks", sizes={"M": 40, "N": 64, "K": 560}, blocks=_blocks(32, 32, 32, 2), seed=5,
             layouts={"b": "transposed"}, large=True, vary={"M": (33, 64), "K": (545, 700)}),
        # K past any unroll (129 or more chunks), a sample of the tiles run.
        Case("k_past_any_unroll", sizes={"M": 72, "N": 136, "K": 4100}, blocks=_blocks(32, 32, 32, 2), seed=6,
             layouts={"a": "transposed"}, large=True, vary={"K": (4097, 5000)}),
    ),
    # c is fp16: a correct kernel differs from the spec only by fp32 sums in another order, which
    # can move the final rounding by one fp16 step (2^-10 of the value). The small atol keeps
    # the erf GELU apart from the tanh form, which differ by up to 5e-4 where x is near -2.7.
    atol=1e-4,
    rtol=2e-3,
    hints=(
        "Puzzle 28's matmul, then an epilogue on the accumulator before its one store: the bias added, then "
        "GELU, in fp32.",
        "Write the matmul of puzzle 28 first: grouped `pid_m, pid_n`, the K loop with `other=0.0` on the "
        "K lanes, `acc = tl.dot(a, b, acc)` into an fp32 accumulator.",
        "After the loop: `bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)` "
        "and `x = acc + bias[None, :]`.",
        f"Then `u = {SQRT_2_OVER_PI:.10f} * (x + 0.044715 * x * x * x)` and `y = x / (1 + tl.exp(-2 * u))`; "
        "store `y.to(tl.float16)` with the mask on M and N.",
    ),
    mistakes=(
        Mistake(r"tl\.math\.erf|libdevice\.erf|\berf\(",
                "your file uses `erf`: that is the exact GELU. This puzzle asks for the tanh form, "
                "`0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))`, i.e. `x / (1 + exp(-2u))`."),
    ),
    look_alikes=(
        LookAlike("the exact GELU, with erf, instead of the tanh form", _erf_gelu,
                  "use the tanh form: `u = sqrt(2/pi) * (x + 0.044715 * x^3)` and `x / (1 + tl.exp(-2 * u))`"),
        LookAlike("GELU(a b) + bias (the activation before the bias)", _gelu_before_bias,
                  "add the bias first, then apply the GELU: `x = acc + bias[None, :]`, then GELU(x)"),
        LookAlike("the bias added per row (bias[i] on row i) instead of per column", _bias_per_row,
                  "load the bias at the tile's columns, `bias_ptr + offs_n`, and add it as `bias[None, :]`"),
        LookAlike("the bias and GELU applied to the partial sum after every K chunk", _epilogue_in_loop,
                  "apply the epilogue once, after the K loop has added every chunk into the accumulator"),
    ),
    bench=Bench(
        sizes=({"M": 8192, "N": 8192, "K": 8192}, {"M": 4096, "N": 4096, "K": 4096},
               {"M": 2048, "N": 2048, "K": 2048},
               # An LLM's feed-forward up-projection, and a tall-skinny product.
               {"M": 8192, "N": 14336, "K": 4096}, {"M": 16384, "N": 1024, "K": 4096}),
        blocks=_blocks(128, 256, 64, 8),
        launch={"num_warps": 8, "num_stages": 3},
        # Least traffic: read a, b and bias once, write c once (fp16). The figure that matters is
        # FLOP/s: 2 * M * N * K for the matmul (the epilogue adds O(M * N)).
        bytes=lambda s: 2 * (s["M"] * s["K"] + s["K"] * s["N"] + s["N"] + s["M"] * s["N"]),
        flops=lambda s: 2 * s["M"] * s["N"] * s["K"],
        baseline=lambda a, b, bias: torch.nn.functional.gelu(torch.addmm(bias, a, b), approximate="tanh"),
        baseline_name="torch.addmm + F.gelu (cuBLAS, then eager)",
        baseline_outputs=("c",),
    ),
)
