r"""
# Puzzle 32: FlashAttention-2, backward

The gradients of puzzle 31's attention with respect to `q`, `k` and `v`, again without
storing any $N_Q \times N_K$ matrix. With $S = QK^\top/\sqrt{d}$, the probabilities
$P = e^{S - L}$ (recomputed from the forward's saved logsumexp $L$), and the upstream
gradient $dO$:

$$dV = P^\top dO, \qquad dP = dO\,V^\top, \qquad
dS_{ij} = P_{ij}\,(dP_{ij} - D_i), \qquad D_i = \sum_c dO_{ic}\,O_{ic}$$

$$dQ = \frac{dS\,K}{\sqrt{d}}, \qquad dK = \frac{dS^\top Q}{\sqrt{d}}$$

$D_i$ is the softmax's correction term: $\sum_j P_{ij}\,dP_{ij}$, which equals the dot
product of row $i$ of $dO$ with row $i$ of the forward's output $O$. That is why the
forward's `o` is an input here: $D$ costs one pass over two $N_Q \times d$ tiles, not a
pass over $P$.

Inputs, all contiguous and laid out as in puzzle 31: `q` `(B, H, NQ, D)`, `k` and `v`
`(B, H, NK, D)`, the forward's `o` `(B, H, NQ, D)` and `lse` `(B, H, NQ)` (fp32), and
`do` `(B, H, NQ, D)`; fp16 except `lse`. Outputs `dq`, `dk`, `dv` in fp16, shaped like
`q`, `k`, `v`. `CAUSAL` is as in puzzle 31.

**One launch, two kinds of program.** $dK$ and $dV$ for a block of keys need a loop over
every block of queries; $dQ$ for a block of queries needs a loop over every block of keys.
FlashAttention-2 gives each its own programs, so that no two programs write the same
element and no atomics are needed. The grid is `(cdiv(NK, BK) + cdiv(NQ, BQ), B * H)`:
program `(j, bh)` with `j < cdiv(NK, BK)` owns key block `j` and writes `dk` and `dv`; a
program with a larger `j` owns query block `j - cdiv(NK, BK)` and writes `dq`. Each
program recomputes the $D_i$ of the query rows it reads.

Traps:

* **Tails.** Query rows past `NQ` and keys past `NK` load as 0 (with `other=0.0`), and then
  add nothing: their `do`, `q` or `k` is 0. Keep every load and store masked.
* **The $D$ term.** Without it, $dS = P \circ dP$ is the gradient of the unnormalised
  exponentials, not of the softmax.
* **Causal.** A key block sees only queries at or after its first key: start the query
  loop there; a query block stops at its own diagonal, as in the forward.

**Sizes.** One case has 280 queries and keys (18 chunks), offsets past 16 bits.
"""
import math

import torch
import triton
import triton.language as tl
from jaxtyping import Float16, Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle, cdiv


def _attention(q, k, v, causal):
    """Puzzle 31's spec in fp32: (output, logsumexp)."""
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).triu(1), float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    return torch.exp(scores - lse[..., None]) @ v, lse


def spec(q: Float16[Tensor, "B H NQ D"], k: Float16[Tensor, "B H NK D"], v: Float16[Tensor, "B H NK D"],
         o: Float16[Tensor, "B H NQ D"], lse: Float32[Tensor, "B H NQ"], do: Float16[Tensor, "B H NQ D"],
         *, CAUSAL: int = 0) -> tuple[Float16[Tensor, "B H NQ D"], Float16[Tensor, "B H NK D"],
                                      Float16[Tensor, "B H NK D"]]:
    # The formulas above in fp32, from the saved o and lse as the kernel gets them (o in fp16):
    # the same as autograd through puzzle 31's spec, up to that rounding of o.
    scale = 1 / math.sqrt(q.shape[-1])
    q, k, v, o, do = (x.float() for x in (q, k, v, o, do))
    s = q @ k.transpose(-1, -2) * scale
    if CAUSAL:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    p = torch.exp(s - lse[..., None])
    d = (do * o).sum(dim=-1, keepdim=True)
    ds = p * (do @ v.transpose(-1, -2) - d)
    return ((ds @ k * scale).half(), (ds.transpose(-1, -2) @ q * scale).half(),
            (p.transpose(-1, -2) @ do).half())


def forward_saved(q, k, v, o, lse, do, *, CAUSAL: int = 0):
    """The forward's output and logsumexp for these q, k, v: what puzzle 31 saves."""
    out, logsumexp = _attention(q.float(), k.float(), v.float(), CAUSAL)
    return q, k, v, out.to(torch.float16), logsumexp, do


def _without_d(q, k, v, o, lse, do, *, sizes):  # a look-alike: dS = P * dP, no D term
    scale = 1 / math.sqrt(q.shape[-1])
    q, k, v, do = (x.float() for x in (q, k, v, do))
    s = q @ k.transpose(-1, -2) * scale
    if sizes["CAUSAL"]:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    p = torch.exp(s - lse[..., None])
    ds = p * (do @ v.transpose(-1, -2))
    return ((ds @ k * scale).half(), (ds.transpose(-1, -2) @ q * scale).half(),
            (p.transpose(-1, -2) @ do).half())


def _sdpa_backward(q, k, v, o, lse, do, *, CAUSAL: int = 0):
    """The bench's baseline: SDPA's forward once, untimed; what is timed is its backward alone
    (FlashAttention's kernel on a GPU), through ``autograd.grad`` so that nothing accumulates."""
    leaves = [x.detach().requires_grad_() for x in (q, k, v)]
    out = torch.nn.functional.scaled_dot_product_attention(*leaves, is_causal=bool(CAUSAL))
    return lambda: torch.autograd.grad(out, leaves, do, retain_graph=True)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def attention_bwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, do_ptr, dq_ptr, dk_ptr, dv_ptr, NQ, NK,
                         D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


def _case(name, seed, *, B=1, H=2, NQ, NK, D, BQ=16, BK=16, causal=0, scale=1.0, **more):
    return Case(name, sizes={"B": B, "H": H, "NQ": NQ, "NK": NK, "D": D},
                blocks={"BQ": BQ, "BK": BK, "CAUSAL": causal}, seed=seed, scale=scale, **more)


PUZZLE = Puzzle(
    id="puzzle32",
    title="FlashAttention-2, backward",
    track="transformer",
    statement=__doc__,
    spec=spec,
    prepare=forward_saved,
    kernel="attention_bwd_kernel",
    output=("dq", "dk", "dv"),
    grid=lambda s: (cdiv(s["NK"], s["BK"]) + cdiv(s["NQ"], s["BQ"]), s["B"] * s["H"]),
    cases=(
        _case("classic", 0, NQ=40, NK=40, D=64),
        _case("causal_with_tails", 1, NQ=40, NK=40, D=64, causal=1),
        _case("one_query_block", 2, NQ=9, NK=9, D=64, causal=1),
        _case("keys_longer_than_queries", 3, B=2, H=1, NQ=20, NK=50, D=64, BK=32),
        _case("head_dim_128", 4, NQ=33, NK=33, D=128, BQ=16, BK=32, causal=1),
        _case("query_block_wider_than_key_block", 5, NQ=48, NK=48, D=64, BQ=32, BK=16, causal=1),
        _case("large_magnitude", 6, NQ=32, NK=32, D=64, scale=2.0),
        # Past anything a kernel could hard-code: 18 chunks of queries, offsets past 16 bits.
        _case("many_chunks", 7, H=1, NQ=280, NK=280, D=128, BQ=16, BK=32, causal=1, large=True),
        # 2 batches of 3 heads at once, past 4096 queries and keys: a sample of the key blocks, the
        # query blocks and the heads runs (the key blocks' programs store dK and dV, the rest dQ).
        _case("long_sequences", 8, B=2, H=3, NQ=4100, NK=4100, D=64, BQ=128, BK=128, large=True,
              vary={"NQ": (4097, 4500), "NK": (4097, 4500)}),
    ),
    # fp16 gradients, and P and dS rounded to fp16 before their dots.
    tolerances={"float16": (1e-2, 1e-2)},
    look_alikes=(
        LookAlike("the softmax's D term left out (dS = P * dP)", _without_d,
                  "subtract D_i = sum_c dO[i, c] * O[i, c] from dP before multiplying by P: "
                  "`ds = p * (dp - d_i[:, None])`"),
    ),
    hints=(
        "Two kinds of program in one launch: one per block of keys computes its `dk` and `dv`, one per block "
        "of queries its `dq`; each recomputes the probabilities from the saved `lse` rather than store them.",
        "Branch on the program: `j = tl.program_id(0)`; `if j < tl.cdiv(NK, BK):` the key-block "
        "program, else the query-block program with `i = j - tl.cdiv(NK, BK)`.",
        "In both, for a query tile (`scale` being puzzle 31's `1.0 / tl.sqrt(D * 1.0)`): "
        "`p = tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None])`, then "
        "`tl.where(visible, p, 0.0)` with `visible = row_ok[:, None] & key_ok[None, :]`, and when `CAUSAL` "
        "also `keys[None, :] <= rows[:, None]`; `d_i = tl.sum(do.to(tl.float32) * o.to(tl.float32), 1)`.",
        "Key block: `dv += tl.dot(tl.trans(p.to(tl.float16)), do)`, `dp = tl.dot(do, tl.trans(v))`, "
        "`ds = p * (dp - d_i[:, None])`, `dk += tl.dot(tl.trans(ds.to(tl.float16)), q)`; "
        "multiply `dk` by `scale` once, after the loop. Query block: `dq += tl.dot(ds.to(tl.float16), k)`, "
        "and `dq` too is multiplied by `scale` once, after the loop (dQ = dS K / sqrt(d)).",
    ),
    bench=Bench(
        sizes=({"B": 4, "H": 16, "NQ": 4096, "NK": 4096, "D": 128}, {"B": 8, "H": 16, "NQ": 1024, "NK": 1024, "D": 128},
               {"B": 4, "H": 32, "NQ": 2048, "NK": 2048, "D": 64}),
        blocks={"BQ": 128, "BK": 128, "CAUSAL": 0},
        launch={"num_warps": 8, "num_stages": 3},
        # Five matmuls of 2 * NQ * NK * D each (S, dP, dV, dQ, dK).
        flops=lambda s: 10 * s["B"] * s["H"] * s["NQ"] * s["NK"] * s["D"] // (2 if s["CAUSAL"] else 1),
        # Read q, k, v, o, do and lse; write dq, dk, dv.
        bytes=lambda s: 2 * s["B"] * s["H"] * (6 * s["NQ"] * s["D"] + 4 * s["NK"] * s["D"]) + 4 * s["B"] * s["H"] * s["NQ"],
        baseline=_sdpa_backward,
        baseline_name="SDPA's backward",
        baseline_prepares=True,
        baseline_outputs=("dq", "dk", "dv"),
    ),
)
