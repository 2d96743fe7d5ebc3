r"""
# Puzzle 41: Matmul with a fused bias and GELU, in Helion

Puzzle 30 again: a feed-forward layer's matmul, a bias per column, and the tanh GELU.

$$x_{i,j} = \sum_{k} a_{i,k}\, b_{k,j} + \mathrm{bias}_j
\qquad
c_{i,j} = \tfrac12\, x_{i,j}\Bigl(1 + \tanh\bigl(\sqrt{2/\pi}\,(x_{i,j} + 0.044715\, x_{i,j}^3)\bigr)\Bigr)$$

`a` is `M × K`, `b` is `K × N`, `bias` has `N` elements, `c` is `M × N`; all fp16,
computed in fp32 and rounded once.

**What Helion does for you.** Everything puzzle 40 took off your hands (the grid and its
order, strides, masks on every tail, tile sizes), and the bias's addresses and mask too:
`bias[tile_n]` is the tile's slice of the bias, where puzzle 30 loaded
`bias_ptr + offs_n` with `mask=offs_n < N`. Helion's `torch.tanh` lowers to Triton's, so the
`sigmoid(2u)` rewrite of puzzle 30 is not needed (it is still right).

**What is still yours: the epilogue, and its place.** It is the same matmul as puzzle 40,
fp32 accumulator included, and then, on the tile that is still in registers:

* **After the K loop**, never inside it: until the last chunk is added the accumulator is a
  partial sum.
* **Bias, then GELU**: `GELU(acc) + bias` is not `GELU(acc + bias)`.
* **Per column**: `bias[tile_n]` is a vector along the tile's columns; add it as
  `bias[tile_n][None, :]`. `bias[tile_m]` would be per row, and past the bias's end when
  `M > N`.
* **The tanh form**, in fp32: `torch.nn.functional.gelu(x)` without `approximate="tanh"` is
  the exact, erf GELU; the cases tell them apart.

A matmul before the loops with the epilogue in the tiles, or the whole thing before them, is
PyTorch's work, and the grader says so.

**Sizes.** Tails in M, N and K, `K` up to 700, a column-major `b`.
"""
import math

import helion
import helion.language as hl
import torch
from jaxtyping import Float16
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Mistake, Puzzle


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


def _epilogue_in_loop(a, b, bias, *, sizes):  # a look-alike: acc = GELU(acc + bias) after every chunk
    acc = torch.zeros(a.shape[0], b.shape[1])
    for k in range(0, sizes["K"], sizes["BLOCK_K"]):
        acc = _gelu(acc + a[:, k:k + sizes["BLOCK_K"]].float() @ b[k:k + sizes["BLOCK_K"], :].float() + bias.float())
    return acc.to(torch.float16)


# ---- your part: finish the kernel ------------------------------------------------
@helion.kernel(autotune_effort="none")
def helion_matmul_bias_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    n = b.size(1)
    c = torch.empty([m, n], dtype=torch.float16, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        # Your code here.
        pass
    return c
# ----------------------------------------------------------------------------------


def _blocks(bm, bn, bk):
    """Helion's tile sizes, in the order of the kernel's tile dims: M and N, then K."""
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}


SQRT_2_OVER_PI = math.sqrt(2 / math.pi)

PUZZLE = Puzzle(
    id="puzzle41",
    title="Matmul with a fused bias and GELU, in Helion",
    track="helion",
    statement=__doc__,
    spec=spec,
    kernel="helion_matmul_bias_gelu",
    kind="helion",
    tiles={"BLOCK_M": "M", "BLOCK_N": "N", "BLOCK_K": "K"},
    grid=None,  # Helion launches one program per tile of the outer hl.tile loop
    output="c",
    cases=(
        # Fewer rows than columns, tails everywhere, four K chunks.
        Case("classic", sizes={"M": 40, "N": 72, "K": 100}, blocks=_blocks(32, 32, 32)),
        # One K chunk; more rows than columns, so a bias read per row runs past its end.
        Case("k_smaller_than_tile", sizes={"M": 48, "N": 40, "K": 10}, blocks=_blocks(32, 32, 32), seed=1),
        Case("b_column_major", sizes={"M": 36, "N": 72, "K": 56}, blocks=_blocks(32, 32, 16), seed=2,
             layouts={"b": "transposed"}),
        # Past anything a kernel could hard-code: 18 or more chunks of K, offsets past 16 bits.
        Case("many_chunks", sizes={"M": 40, "N": 64, "K": 560}, blocks=_blocks(32, 32, 32), seed=3,
             large=True, vary={"M": (33, 64), "K": (545, 700)}),
    ),
    # Puzzle 30's: one fp16 step of the value, and a small atol that keeps the erf GELU apart.
    atol=1e-4,
    rtol=2e-3,
    hints=(
        "Puzzle 40's matmul, then an epilogue on the fp32 accumulator after the inner loop: the bias added, "
        "GELU, one cast, one store.",
        "Write puzzle 40's kernel first: an fp32 accumulator from `hl.zeros`, and "
        "`hl.dot(a[tile_m, tile_k], b[tile_k, tile_n], acc=acc)` over `hl.tile(k)`.",
        "After the K loop: `x = acc + bias[tile_n].to(torch.float32)[None, :]`.",
        f"Then `u = {SQRT_2_OVER_PI:.10f} * (x + 0.044715 * x * x * x)`, and store "
        "`0.5 * x * (1.0 + torch.tanh(u))`, cast to fp16, into `c[tile_m, tile_n]`.",
    ),
    mistakes=(
        Mistake(r"\berf\(|\b(F|functional)\.gelu\((?![^)\n]*approximate)",
                "your file uses the exact GELU (`erf`, or `F.gelu` without `approximate=\"tanh\"`). This puzzle "
                "asks for the tanh form, `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))`."),
    ),
    look_alikes=(
        LookAlike("the exact GELU, with erf, instead of the tanh form", _erf_gelu,
                  "use the tanh form: `0.5 * x * (1 + torch.tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))`"),
        LookAlike("GELU(a b) + bias (the activation before the bias)", _gelu_before_bias,
                  "add the bias first, then apply the GELU: `x = acc + bias[tile_n][None, :]`, then GELU(x)"),
        LookAlike("the bias and GELU applied to the partial sum after every K chunk", _epilogue_in_loop,
                  "apply the epilogue once, after the `hl.tile(k)` loop has added every chunk into `acc`"),
    ),
    bench=Bench(
        # Puzzle 30's sweep.
        sizes=({"M": 8192, "N": 8192, "K": 8192}, {"M": 4096, "N": 4096, "K": 4096},
               {"M": 2048, "N": 2048, "K": 2048},
               {"M": 8192, "N": 14336, "K": 4096}, {"M": 16384, "N": 1024, "K": 4096}),
        blocks=_blocks(128, 256, 64),
        launch={"num_warps": 8, "num_stages": 3},
        bytes=lambda s: 2 * (s["M"] * s["K"] + s["K"] * s["N"] + s["N"] + s["M"] * s["N"]),
        flops=lambda s: 2 * s["M"] * s["N"] * s["K"],
        baseline=lambda a, b, bias: torch.nn.functional.gelu(torch.addmm(bias, a, b), approximate="tanh"),
        baseline_name="torch.addmm + F.gelu (cuBLAS, then eager)",
        baseline_outputs=("c",),
    ),
)
