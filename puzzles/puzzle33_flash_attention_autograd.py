r"""
# Puzzle 33: FlashAttention-2 as an autograd function

Wrap your attention kernels, puzzle 31's forward and puzzle 32's backward, in a
`torch.autograd.Function`, so that a model can train through them:

$$O = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d}}\right) V$$

* `forward(ctx, q, k, v)`: `q` is `(B, H, NQ, D)`, `k` and `v` are `(B, H, NK, D)`, all fp16.
  Allocate `o` (fp16, like `q`) and `lse` (fp32, `(B, H, NQ)`), launch
  `attention_fwd_kernel` with `CAUSAL=0`, save what the backward needs, and return `o`.
* `backward(ctx, grad_output)`: launch `attention_bwd_kernel` and return
  `(grad_q, grad_k, grad_v)`, each shaped like its input.

This is the interface of Stanford CS336's second assignment (there with an `is_causal`
flag; here the wrapper is non-causal). The grader records `FlashAttentionFunc` on tensors
without values and replays it (as in puzzle 15), and checks, for every case:

1. the output against the spec;
2. that the forward and the backward launch Triton kernels, and that no PyTorch operator
   computes on `q`, `k` or `v` in their place: calling
   `torch.nn.functional.scaled_dot_product_attention`, or a `softmax` in PyTorch, fails.
   PyTorch may allocate and make a tensor contiguous, nothing more: no reduction runs on the
   host;
3. that `ctx` saved only `q`, `k`, `v`, the output `o` and the logsumexp `lse`, each with memory
   of its own (a view keeps its whole buffer alive). Saving the
   probabilities defeats the point: they are the $N_Q \times N_K$ matrix that FlashAttention
   exists not to store;
4. the three gradients against PyTorch autograd through the spec.

`grad_output` may arrive non-contiguous: the backward kernel assumes contiguous rows, so
pass `grad_output.contiguous()`. So may `q`, `k` and `v` (a model's are views of one projection):
make them contiguous before the forward's launch, and save those copies. Pick the blocks from `D`; for the interpreter's small cases,
16 by 16 is plenty.

**Sizes.** One case has about 280 queries and keys, offsets past 16 bits and a non-
contiguous `grad_output`; a batch draws its sizes within a range, so fit nothing to the
sizes you see.
"""
import math

import torch
from jaxtyping import Float16
from torch import Tensor

from grader.puzzle import Bench, Case, Mistake, Puzzle, Variant
from puzzle31_flash_attention_forward import attention_fwd_kernel  # noqa: F401  (your puzzle 31 kernel)
from puzzle32_flash_attention_backward import attention_bwd_kernel  # noqa: F401  (your puzzle 32 kernel)

# Causal or not: each student of a class graded with a secret gets one. The wrapper passes it to
# both kernels (which take either, puzzles 31 and 32): the grader never does. Causal cases have
# as many keys as queries, as puzzle 31 requires.
CAUSAL = Variant("CAUSAL", choices=(0, 1), default=0, what="CAUSAL",
                 also={"MASK": lambda c: " + M" if c else "",
                       "CAUSAL_WORDS": lambda c: "causal: $M_{ij} = -\\infty$ where key $j$ comes after query "
                                                 "$i$, and `NQ == NK` in every case" if c else "non-causal"},
                 stated=(r"{\sqrt{d}}{{MASK}}\right)", "with `CAUSAL={{CAUSAL}}`, save", "the wrapper is {{CAUSAL_WORDS}})."))


def spec(q: Float16[Tensor, "B H NQ D"], k: Float16[Tensor, "B H NK D"],
         v: Float16[Tensor, "B H NK D"], *, CAUSAL: int) -> Float16[Tensor, "B H NQ D"]:
    scores = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if CAUSAL:
        nq, nk = scores.shape[-2:]
        scores = scores.masked_fill(torch.ones(nq, nk, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v.float()).to(torch.float16)


# ---- your part: finish the autograd function ---------------------------------------
class FlashAttentionFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        # Your code here.
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        # Your code here.
        raise NotImplementedError
# ----------------------------------------------------------------------------------


def _case(name, seed, *, B=1, H=2, NQ, NK, D, layouts=None, **more):
    return Case(name, sizes={"B": B, "H": H, "NQ": NQ, "NK": NK, "D": D}, blocks={}, seed=seed,
                layouts=layouts or {}, **more)


def _cases(causal: int) -> tuple[Case, ...]:
    """The cases; causal ones have as many keys as queries (the longer of the two)."""
    keys = (lambda nq, nk: max(nq, nk)) if causal else (lambda nq, nk: nk)
    queries = (lambda nq, nk: max(nq, nk)) if causal else (lambda nq, nk: nq)
    return (
        _case("classic", 0, NQ=40, NK=40, D=64),
        # grad_output arrives with its dims in reverse memory order, as the statement warns.
        _case("keys_longer_than_queries" if not causal else "as_many_queries_as_keys", 1, B=2, H=1,
              NQ=queries(20, 37), NK=keys(20, 37), D=64, layouts={"grad_output": "transposed"}),
        _case("head_dim_128", 2, NQ=24, NK=24, D=128),
        _case("one_query_block", 3, NQ=7, NK=7, D=64),
        # Several batches and several heads at once: a (batch, head) flattened in one order in one
        # place and in the other elsewhere is right whenever either is 1.
        _case("batches_and_heads", 5, B=2, H=3, NQ=queries(33, 45), NK=keys(33, 45), D=64),
        # q, k and v as a model hands them: views of one projection, not contiguous (here their dims in
        # reverse memory order). The kernels assume contiguous rows: make them so before the launch.
        _case("inputs_not_contiguous", 6, B=2, H=2, NQ=queries(24, 40), NK=keys(24, 40), D=64,
              layouts={"q": "transposed", "k": "transposed", "v": "transposed"}),
        # Past anything a kernel could hard-code: more than 256 rows of queries and keys, offsets past
        # 16 bits, and a non-contiguous grad_output. Causal: NK follows the NQ drawn (derive).
        _case("many_rows", 4, H=1, NQ=280, NK=280, D=128, layouts={"grad_output": "transposed"}, large=True,
              vary={"NQ": (260, 320)} if causal else {"NQ": (260, 320), "NK": (260, 320)}),
    ) + (() if causal else (
        # Sequences past 4096, a multiple of no block, with several batches and heads at once. In the
        # interpreter each launch runs a sample of its programs (the same heads in every launch);
        # the backward's key blocks read every query row of the forward's o and lse, so where the
        # queries are long every query block of the sampled heads runs.
        # Scores of spread 4 (scale 2): each query attends to a few keys, so keys left out show.
        _case("keys_past_4096", 10, B=3, H=4, NQ=40, NK=4500, D=64, large=True, scale=2.0,
              vary={"NQ": (33, 60), "NK": (4353, 4700)}),
        _case("queries_past_4096", 11, B=4, H=3, NQ=4100, NK=40, D=64, large=True,
              vary={"NQ": (4097, 4400), "NK": (33, 60)}),
    ))


PUZZLE = Puzzle(
    id="puzzle33",
    title="FlashAttention-2 as an autograd function",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="FlashAttentionFunc",
    kind="function",
    grid=None,
    output="o",
    saves={"o": "B H NQ D", "lse": "B H NQ"},
    cases=_cases(CAUSAL.default),
    variants=(CAUSAL,),
    rebuild=lambda v: {"cases": _cases(v["CAUSAL"]), "derive": (lambda s: {"NK": s["NQ"]}) if v["CAUSAL"] else None},
    tolerances={"float16": (1e-2, 1e-2)},
    mistakes=(
        Mistake(r"scaled_dot_product_attention|\bsoftmax\(",
                "your file computes attention with PyTorch (`scaled_dot_product_attention` or `softmax`). "
                "The point of this puzzle is your kernels: launch `attention_fwd_kernel` in the forward and "
                "`attention_bwd_kernel` in the backward, and let PyTorch only allocate."),
    ),
    hints=(
        "The wrapper only allocates, launches puzzle 31's and 32's kernels over their grids, and saves what "
        "the backward needs.",
        "Forward: `q, k, v = q.contiguous(), k.contiguous(), v.contiguous()` (they may arrive strided), "
        "`o = torch.empty_like(q)`, `lse = q.new_empty(q.shape[:-1], dtype=torch.float32)`, grid "
        "`(triton.cdiv(NQ, BQ), B * H)`, then `ctx.save_for_backward(q, k, v, o, lse)`.",
        "Backward: `grad_q, grad_k, grad_v = (torch.empty_like(t) for t in (q, k, v))`, grid "
        "`(triton.cdiv(NK, BK) + triton.cdiv(NQ, BQ), B * H)`, and the kernel gets "
        "`grad_output.contiguous()` as `do`.",
    ),
    # --bench: forward and backward together against PyTorch autograd through SDPA.
    bench=Bench(
        sizes=({"B": 4, "H": 16, "NQ": 4096, "NK": 4096, "D": 128}, {"B": 8, "H": 16, "NQ": 1024, "NK": 1024, "D": 128}),
        bytes=lambda s: 2 * s["B"] * s["H"] * (9 * s["NQ"] * s["D"] + 6 * s["NK"] * s["D"]),
        # Forward (two matmuls) and backward (five), 2 * NQ * NK * D each.
        flops=lambda s: 14 * s["B"] * s["H"] * s["NQ"] * s["NK"] * s["D"],
        baseline=lambda q, k, v, *, CAUSAL: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=bool(CAUSAL)),
        baseline_name="SDPA (autograd)",
        baseline_outputs=("grad_q", "grad_k", "grad_v"),
    ),
)
