r"""
# Puzzle 31: FlashAttention-2, forward

Scaled dot-product attention for every batch and head, without ever writing the
$N_Q \times N_K$ score matrix to memory:

$$S = \frac{Q K^\top}{\sqrt{d}}, \qquad
O = \operatorname{softmax}(S)\,V, \qquad
L_i = \log \sum_j e^{S_{ij}}$$

`q` has shape `(B, H, NQ, D)`, `k` and `v` have shape `(B, H, NK, D)`, all fp16 and
contiguous; `o` is `(B, H, NQ, D)` in fp16 and the logsumexp `lse` is `(B, H, NQ)` in fp32.
The grid is `(cdiv(NQ, BQ), B * H)`: program `(i, bh)` owns query rows `i * BQ` up to
`i * BQ + BQ - 1` of head `bh` (that is, batch `bh // H`, head `bh % H`), and the head's
`q`, `k` and `v` start at `bh * NQ * D`, `bh * NK * D` and `bh * NK * D`. `D` is the head
dimension, a power of two known at compile time.

With `CAUSAL = 1`, query `i` sees only keys `j <= i` (then `NQ == NK`); with `CAUSAL = 0`
it sees every key, and `NK` may differ from `NQ`.

This is puzzle 9 grown up, in the form Stanford CS336's second assignment asks for (`q`, `k`
and `v` of shape batch, heads, sequence, dim). The **online softmax** of puzzles 8 and 19
now runs over blocks of keys: keep, for each query row, a running maximum $m$, a running
denominator $\ell$ and an unnormalised output tile $A$ (fp32). For each block of `BK` keys:

$$m' = \max(m, \max_j S_{ij}), \quad
\ell \leftarrow \ell\, e^{m - m'} + \sum_j e^{S_{ij} - m'}, \quad
A \leftarrow A\, e^{m - m'} + e^{S - m'} V_{\text{block}}$$

and at the end $O = A / \ell$ and $L = m + \log \ell$. Both products are `tl.dot`s: `q`
against the transposed key block, then the probabilities (cast to the values' dtype, fp16
here) against the value block, each accumulating in fp32. The saved $L$ is what the backward
(puzzle 32) needs to recompute the probabilities without storing them.

Traps the cases spring:

* **Tails.** `NQ` and `NK` need not be multiples of the blocks: mask the loads, and give
  keys past `NK` a score of `-inf` (a key loaded as 0 would still get a score of 0).
* **The rescale.** Forgetting to multiply $\ell$ and $A$ by $e^{m - m'}$ is right only while
  the maximum never grows. Large-magnitude cases make it grow a lot.
* **The diagonal.** In causal mode a block of keys that straddles the diagonal needs the
  mask `key <= query`; blocks entirely above it need no work at all: stop the loop at the
  end of the program's own query block.
* **Sizes.** One case has 280 queries and keys (18 chunks), offsets past 16
  bits.
"""
import math

import torch
import triton
import triton.language as tl
from jaxtyping import Float16, Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle, cdiv


def spec(q: Float16[Tensor, "B H NQ D"], k: Float16[Tensor, "B H NK D"], v: Float16[Tensor, "B H NK D"],
         *, CAUSAL: int = 0) -> tuple[Float16[Tensor, "B H NQ D"], Float32[Tensor, "B H NQ"]]:
    scores = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if CAUSAL:
        nq, nk = scores.shape[-2:]
        scores = scores.masked_fill(torch.ones(nq, nk, dtype=torch.bool, device=scores.device).triu(1), float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    return (torch.exp(scores - lse[..., None]) @ v.float()).to(q.dtype), lse


def _no_rescale(q, k, v, *, sizes):  # a look-alike: m grows, but l and A are not rescaled
    s = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if sizes["CAUSAL"]:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    m = torch.full(s.shape[:-1], float("-inf"))
    l = torch.zeros(s.shape[:-1])
    acc = torch.zeros(*s.shape[:-1], v.shape[-1])
    for start in range(0, s.shape[-1], sizes["BK"]):
        block = s[..., start:start + sizes["BK"]]
        m = torch.maximum(m, block.amax(dim=-1))
        p = torch.exp(block - m[..., None]).nan_to_num(0.0)
        l = l + p.sum(dim=-1)
        acc = acc + p.half().float() @ v[..., start:start + sizes["BK"], :].float()
    return (acc / l[..., None]).to(torch.float16), m + torch.log(l)


def _diagonal_hidden(q, k, v, *, sizes):  # a look-alike: the causal mask key < query, not key <= query
    s = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if sizes["CAUSAL"]:  # triu(0) hides the diagonal too: query 0 sees no key, and 0 / 0 is NaN
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(0), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    return (torch.exp(s - lse[..., None]) @ v.float()).to(q.dtype), lse


def _sdpa(q, k, v, *, CAUSAL: int = 0):  # the bench's baseline
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=bool(CAUSAL))


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, NQ, NK, D: tl.constexpr,
                         BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


def _case(name, seed, *, B=1, H=2, NQ, NK, D, BQ=16, BK=16, causal=0, scale=1.0, **more):
    return Case(name, sizes={"B": B, "H": H, "NQ": NQ, "NK": NK, "D": D},
                blocks={"BQ": BQ, "BK": BK, "CAUSAL": causal}, seed=seed, scale=scale, **more)


PUZZLE = Puzzle(
    id="puzzle31",
    title="FlashAttention-2, forward",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="attention_fwd_kernel",
    output=("o", "lse"),
    grid=lambda s: (cdiv(s["NQ"], s["BQ"]), s["B"] * s["H"]),
    cases=(
        _case("classic", 0, NQ=40, NK=40, D=64),
        _case("causal_with_tails", 1, NQ=40, NK=40, D=64, causal=1),
        _case("one_query_block", 2, NQ=9, NK=9, D=64, causal=1),
        _case("keys_longer_than_queries", 3, B=2, H=1, NQ=20, NK=70, D=64, BK=32),
        _case("head_dim_128", 4, NQ=33, NK=33, D=128, BQ=32, BK=16, causal=1),
        _case("key_block_wider_than_query_block", 5, NQ=48, NK=48, D=64, BQ=16, BK=32, causal=1),
        # Scores near 100: exp overflows without the maximum, which grows block after block.
        _case("large_magnitude", 6, NQ=32, NK=64, D=64, scale=5.0),
        _case("causal_large_magnitude", 7, NQ=48, NK=48, D=64, causal=1, scale=5.0),
        # Past anything a kernel could hard-code: 18 chunks of keys, offsets past 16 bits.
        _case("many_chunks", 8, H=1, NQ=280, NK=280, D=128, BQ=32, BK=16, causal=1, large=True),
        # 2 batches of 2 heads at once, past 4096 queries and keys: a sample of the query blocks runs.
        _case("long_sequences", 9, B=2, H=2, NQ=4100, NK=4100, D=64, BQ=64, BK=64, large=True,
              vary={"NQ": (4097, 4500), "NK": (4097, 4500)}),
    ),
    # o: fp16 storage, and the probabilities rounded to fp16 before the second dot.
    # bf16 only in --bench (the interpreter's bf16 dot is unreliable): 8 mantissa bits.
    tolerances={"float16": (3e-3, 3e-3), "bfloat16": (2e-2, 2e-2), "float32": (2e-4, 2e-4)},
    look_alikes=(
        LookAlike("the running maximum raised without rescaling the running sum and output",
                  _no_rescale, "when a block raises the maximum from m to m', multiply the running sum "
                  "and the output tile by exp(m - m') before adding the new block"),
        LookAlike("the causal mask hiding the diagonal (key < query, where it must be key <= query)",
                  _diagonal_hidden, "query row 0 of every head then sees no key at all, so its softmax is "
                  "0 / 0 (NaN), and every later row misses its own key. Keep the diagonal visible, a query "
                  "always sees itself: mask with `keys[None, :] <= rows[:, None]`"),
    ),
    hints=(
        "Puzzle 9 with tiles: per block of queries, walk the keys in blocks, keeping a running maximum, sum "
        "and output; when `CAUSAL`, stop at the diagonal and mask within it.",
        "Load the query tile once: `q_ptr + bh * NQ * D + rows[:, None] * D + dims[None, :]`, masked by "
        "`rows < NQ`. Loop `for start in range(0, end, BK)` with `end = NK`, or, when `CAUSAL`, "
        "`tl.minimum(NK, (i + 1) * BQ)`.",
        "Scores: `tl.dot(q, tl.trans(k)) * scale` with `scale = 1.0 / tl.sqrt(D * 1.0)`; then "
        "`tl.where(visible, s, float('-inf'))`, where `visible` is `(keys < NK)[None, :]`, and when "
        "`CAUSAL` also `keys[None, :] <= rows[:, None]`.",
        "Per block: `m_new = tl.maximum(m, tl.max(s, 1))`, `alpha = tl.exp(m - m_new)`, "
        "`p = tl.exp(s - m_new[:, None])`, `l = l * alpha + tl.sum(p, 1)`, "
        "`acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)` (fp16 in the cases, bf16 in `--bench`), "
        "then `m = m_new`.",
    ),
    # --bench: the headline (bf16, causal, d = 128, sequences of 8192) and a sweep, against
    # PyTorch's scaled_dot_product_attention on the same inputs.
    bench=Bench(
        sizes=({"B": 2, "H": 16, "NQ": 8192, "NK": 8192, "D": 128}, {"B": 8, "H": 16, "NQ": 2048, "NK": 2048, "D": 128},
               {"B": 4, "H": 16, "NQ": 4096, "NK": 4096, "D": 128}, {"B": 4, "H": 32, "NQ": 4096, "NK": 4096, "D": 64}),
        blocks={"BQ": 128, "BK": 64, "CAUSAL": 1},
        launch={"num_warps": 8, "num_stages": 3},
        dtypes={"q": "bfloat16", "k": "bfloat16", "v": "bfloat16", "o": "bfloat16"},
        bytes=lambda s: 2 * s["B"] * s["H"] * (2 * s["NQ"] * s["D"] + 2 * s["NK"] * s["D"]) + 4 * s["B"] * s["H"] * s["NQ"],
        # Two matmuls of 2 * NQ * NK * D each; causal skips half.
        flops=lambda s: 4 * s["B"] * s["H"] * s["NQ"] * s["NK"] * s["D"] // (2 if s["CAUSAL"] else 1),
        baseline=_sdpa,
        baseline_name="SDPA",
        baseline_outputs=("o",),
    ),
)
