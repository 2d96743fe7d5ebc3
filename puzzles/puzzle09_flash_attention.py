r"""
# Puzzle 9: Flash attention (scalar)

Attention with a head dimension of 1: every query, key and value is a single number.
Each query takes a softmax over **its own** scores against all the keys, and returns the
weighted average of the values.

$$z_i = \sum_{j=0}^{T-1} \frac{e^{\,q_i k_j - m_i}}{\sum_{l=0}^{T-1} e^{\,q_i k_l - m_i}}\, v_j
\qquad m_i = \max_{l} q_i k_l \qquad i = 0, \dots, N_0 - 1$$

`q` and `z` have length `N0`; `k` and `v` have length `T`. The softmax is taken over the
keys separately for each query $i$ (row $i$ of the `N0 x T` score matrix), not over the
whole matrix. The grid has `cdiv(N0, B0)` programs; program `p` handles queries `p * B0`
up to `p * B0 + B0 - 1` and walks over all `T` keys in blocks of `B1`.

The new idea is to do puzzle 8's online softmax and the weighted sum **in the same pass**,
without ever storing the scores. For each query keep three running values: the maximum
score $m$, the denominator $s = \sum e^{qk - m}$ and the numerator $a = \sum e^{qk - m} v$.
When a key block raises the maximum from $m$ to $m'$, multiply both $s$ and $a$ by
$e^{m - m'}$ before adding the block's terms. After the last block, $z = a / s$. This is
the heart of FlashAttention.

Subtract the running maximum: some cases have `q` and `k` around 10, so scores reach the
hundreds and a bare `exp` overflows.

**Sizes.** One case has 40000 keys, so offsets pass 16 bits, and a batch draws its sizes
within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Puzzle, cdiv, seeds


def spec(
    q: Float32[Tensor, "N0"], k: Float32[Tensor, "T"], v: Float32[Tensor, "T"]
) -> Float32[Tensor, "N0"]:
    scores = q[:, None] * k[None, :]              # (N0, T)
    weights = torch.softmax(scores, dim=1)        # one softmax per query (row)
    return weights @ v


def _softmax_over_all(q, k, v):  # a look-alike: one denominator for the whole score matrix
    scores = q[:, None] * k[None, :]
    e = torch.exp(scores - scores.max())
    return e @ v / e.sum()


def _no_division(q, k, v):  # a look-alike: the weighted sum of values never divided by the sum
    scores = q[:, None] * k[None, :]
    return torch.exp(scores - scores.max(dim=1, keepdim=True).values) @ v


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def flashatt_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle09",
    title="Flash attention (scalar)",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="flashatt_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]),),
    cases=(
        *seeds(Case("classic", sizes={"N0": 200, "T": 200}, blocks={"B0": 64, "B1": 32}), 1, 2),
        Case("queries_ne_keys_with_tails", sizes={"N0": 50, "T": 90}, blocks={"B0": 16, "B1": 32}, seed=3),
        Case("few_queries_many_keys", sizes={"N0": 5, "T": 300}, blocks={"B0": 8, "B1": 64}, seed=4),
        Case("small_blocks", sizes={"N0": 21, "T": 33}, blocks={"B0": 8, "B1": 8}, seed=5),
        # q and k around +-10: scores reach the hundreds, a bare exp overflows.
        Case("large_magnitude", sizes={"N0": 40, "T": 70}, blocks={"B0": 16, "B1": 32}, seed=6, scale=10.0),
        # The last key is the largest, 40 above the rest: for a positive query it gives the
        # maximum score, in the last key block, and a maximum taken from the first block overflows.
        Case("max_in_last_chunk", sizes={"N0": 40, "T": 70}, blocks={"B0": 16, "B1": 32}, seed=7, scale=10.0,
             edges={"k": "max_last_chunk"}),
        # Every key is below -20: the queries above about 5 have only scores below -104, whose
        # exp underflows to 0, so a running maximum that starts at 0 instead of -inf gives 0 / 0.
        Case("all_negative_scores", sizes={"N0": 40, "T": 70}, blocks={"B0": 16, "B1": 32}, seed=8, scale=20.0,
             edges={"k": "all_negative"}),
        # Past anything a kernel could hard-code: more keys than 16-bit offsets reach (hundreds of chunks).
        Case("past_16_bit_offsets", sizes={"N0": 9, "T": 40000}, blocks={"B0": 16, "B1": 256}, seed=9,
             large=True, vary={"N0": (9, 16), "T": (33000, 45000)}),
    ),
    # fp32; a different summation order than torch and a GPU's approximate tl.exp.
    atol=1e-5,
    rtol=1e-4,
    hints=(
        "Puzzle 8's first pass, with values: keep a running maximum, a running denominator and a running "
        "weighted sum of `v`, the last two rescaled whenever the maximum grows; one pass over the keys "
        "suffices.",
        "Load this program's queries once (`other=0.0` past `N0`) and start with "
        "`m = tl.full([B0], float('-inf'), tl.float32)`, `s = tl.zeros([B0], dtype=tl.float32)`, "
        "`a = tl.zeros([B0], dtype=tl.float32)`. Per key block, the scores are the "
        "`(B0, B1)` tile `q[:, None] * k[None, :]`.",
        "Set the scores of keys past `T` to `float('-inf')` with `tl.where` so that their "
        "weight `exp(-inf) = 0`; then `m_new = tl.maximum(m, tl.max(scores, axis=1))`, "
        "`p = tl.exp(scores - m_new[:, None])`, `alpha = tl.exp(m - m_new)`, "
        "`s = s * alpha + tl.sum(p, axis=1)`, `a = a * alpha + tl.sum(p * v[None, :], axis=1)`.",
    ),
    look_alikes=(
        LookAlike("one softmax over the whole score matrix (every query and key together)", _softmax_over_all,
                  "each query (row) has its own softmax over the keys: keep a maximum `m` and a sum `s` "
                  "per query, shape `[B0]`, and divide that query's weighted sum by its own `s`"),
        LookAlike("the weighted sum of values without the division by the softmax's sum", _no_division,
                  "store `a / s`: the weights `exp(score - m)` sum to `s`, not to 1"),
    ),
)
