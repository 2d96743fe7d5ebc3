r"""
# Puzzle 42: Causal attention forward, in Helion

Puzzle 31 again, causal: FlashAttention's forward pass, without ever writing the score matrix.

$$S = \frac{Q K^\top}{\sqrt{d}}, \quad S_{ij} = -\infty \text{ where } j > i, \qquad
O = \operatorname{softmax}(S)\,V, \qquad
L_i = \log \sum_j e^{S_{ij}}$$

`q`, `k` and `v` have shape `(B, H, N, D)` (`NQ == NK` here), fp16; the kernel returns `o`
(`(B, H, NQ, D)`, fp16) and the logsumexp `lse` (`(B, H, NQ)`, fp32), in that order. Query
`i` sees keys `j <= i`, its own included.

**What Helion does for you.** In puzzle 31 the grid was `(cdiv(NQ, BQ), B * H)`, each head
started at `bh * NQ * D`, every tile's addresses were `rows[:, None] * D + dims[None, :]`,
keys past `NK` were masked on load and scored `-inf`, and `BQ`, `BK`, warps and stages were
yours. In Helion, view the heads as one batch dimension on the host
(`q.reshape(-1, nq, d)`: a view, no copy), then

```python
for tile_bh, tile_q in hl.tile([b * h, nq]):     # the grid: heads x query tiles
    ...                                          # q_view[tile_bh, tile_q, :] is a 3-D tile
    for tile_k in hl.tile(nk):                   # the loop over key blocks
        ...
```

Batched `hl.dot` on 3-D tiles is `tl.dot` per head: `hl.dot(q_tile, k_tile.transpose(1, 2))`
gives fp32 scores from fp16 tiles. The tails of the query and key tiles are Helion's, and
so are the tile sizes (autotuned on a GPU). `d = hl.specialize(q.size(-1))` makes the head
dimension a compile-time constant, as `D: tl.constexpr` was.

**What is still yours: the whole algorithm.** Per query row a running maximum `m`
(`hl.full([tile_bh, tile_q], float("-inf"), dtype=torch.float32)`), a running sum `l` and an
fp32 output tile `acc` (`hl.zeros([tile_bh, tile_q, d], dtype=torch.float32)`); per key block

$$m' = \max(m, \max_j S_{ij}), \quad
\ell \leftarrow \ell\, e^{m - m'} + \sum_j e^{S_{ij} - m'}, \quad
A \leftarrow A\, e^{m - m'} + e^{S - m'} V_{\text{block}}$$

and at the end $O = A / \ell$ and $L = m + \log \ell$. The traps:

* **Scores in fp32.** `torch.bmm(q_tile, k_tile.transpose(1, 2))` on fp16 tiles returns fp16
  scores: near 100 they are off by 0.06, and so is every exponent. `hl.dot` without an `acc`
  returns fp32.
* **The causal mask** compares global positions: `tile_q.index` and `tile_k.index` are the
  tiles' row and key indices, so `tile_k.index[None, None, :] <= tile_q.index[None, :, None]` is
  visible, everything else is `-inf` (`torch.where`). `<` instead of `<=` hides each query's own
  key, and query 0 then sees nothing: 0 / 0.
* **The rescale** of `l` and `acc` by $e^{m - m'}$, as in puzzle 38.
* **The probabilities in fp16** for the second dot (`p.to(v.dtype)`), as puzzle 31 did, and
  `acc` fp32.

Puzzle 31 stopped the key loop at the end of the program's own query block; looping over all
keys with the mask is correct too, only slower.

**Sizes.** Sequences of 9 to 280, head dims 64 and 128, scores up to about 100.
"""
import math

import helion
import helion.language as hl
import torch
from jaxtyping import Float16, Float32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Puzzle


def _causal_scores(q, k):
    s = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1])
    hidden = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1)
    return s.masked_fill(hidden, float("-inf"))


def spec(q: Float16[Tensor, "B H NQ D"], k: Float16[Tensor, "B H NK D"],
         v: Float16[Tensor, "B H NK D"]) -> tuple[Float16[Tensor, "B H NQ D"], Float32[Tensor, "B H NQ"]]:
    scores = _causal_scores(q, k)
    lse = torch.logsumexp(scores, dim=-1)
    return (torch.exp(scores - lse[..., None]) @ v.float()).to(q.dtype), lse


def _no_rescale(q, k, v, *, sizes):  # a look-alike: m grows, but l and A are not rescaled
    s = _causal_scores(q, k)
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


def _diagonal_hidden(q, k, v):  # a look-alike: the causal mask key < query, not key <= query
    s = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1])
    s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(0), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)  # query 0 sees no key: its softmax is 0 / 0
    return (torch.exp(s - lse[..., None]) @ v.float()).to(q.dtype), lse


def _sdpa(q, k, v):  # the bench's baseline
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


# ---- your part: finish the kernel ------------------------------------------------
@helion.kernel(autotune_effort="none")
def helion_causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    b, h, nq, d = q.size()
    nk = k.size(2)
    d = hl.specialize(d)
    q_view, k_view, v_view = q.reshape(-1, nq, d), k.reshape(-1, nk, d), v.reshape(-1, nk, d)
    o = torch.empty_like(q)
    lse = torch.empty([b, h, nq], dtype=torch.float32, device=q.device)
    o_view, lse_view = o.reshape(-1, nq, d), lse.reshape(-1, nq)
    for tile_bh, tile_q in hl.tile([b * h, nq]):
        # Your code here.
        pass
    return o, lse
# ----------------------------------------------------------------------------------


def _case(name, seed, *, B=1, H=2, N, D, BH=1, BQ=16, BK=16, scale=1.0, **more):
    return Case(name, sizes={"B": B, "H": H, "NQ": N, "NK": N, "D": D},
                blocks={"BH": BH, "BQ": BQ, "BK": BK}, seed=seed, scale=scale, **more)


PUZZLE = Puzzle(
    id="puzzle42",
    title="Causal attention forward, in Helion",
    track="helion",
    statement=__doc__,
    spec=spec,
    kernel="helion_causal_attention",
    kind="helion",
    tiles={"BH": "B*H", "BQ": "NQ", "BK": "NK"},
    grid=None,  # Helion launches one program per tile of the outer hl.tile loop
    output=("o", "lse"),
    cases=(
        # 40 rows in query and key tiles of 16: the diagonal crosses partial tiles.
        _case("classic", 0, N=40, D=64),
        _case("one_query_tile", 1, N=9, D=64),
        _case("two_heads_per_tile", 2, B=2, H=3, N=24, D=64, BH=2),
        _case("head_dim_128", 3, N=33, D=128, BQ=32, BK=16),
        _case("key_tile_wider_than_query_tile", 4, N=48, D=64, BQ=16, BK=32),
        # Scores near 100: exp overflows without the maximum, which grows block after block.
        _case("large_magnitude", 5, N=48, D=64, scale=5.0),
        # Past anything a kernel could hard-code: 9 query tiles, 9 key tiles, offsets past 16 bits.
        _case("many_chunks", 6, H=1, N=280, D=128, BQ=32, BK=32, large=True),
    ),
    # Puzzle 31's: o in fp16, the probabilities rounded to fp16 before the second dot.
    tolerances={"float16": (3e-3, 3e-3), "bfloat16": (2e-2, 2e-2), "float32": (2e-4, 2e-4)},
    hints=(
        "Puzzle 31's forward in Helion: per tile of queries, a loop over tiles of keys keeping a running "
        "maximum, sum and output in fp32, with the causal mask made from the tiles' indices.",
        "In the outer loop: the query tile `q_view[tile_bh, tile_q, :]` (`qt` below); the running "
        "maximum `m` and sum `l`, of "
        "shape `[tile_bh, tile_q]` in fp32 (the maximum from `hl.full(..., float('-inf'), ...)`), and an fp32 "
        "output tile `acc` from `hl.zeros([tile_bh, tile_q, d], dtype=torch.float32)`.",
        "Per key tile: `s = hl.dot(qt, k_view[tile_bh, tile_k, :].transpose(1, 2)) * scale` with "
        "`scale` the number `1 / math.sqrt(d)`, worked out before the loops, then "
        "`s = torch.where(tile_k.index[None, None, :] <= tile_q.index[None, :, None], s, float('-inf'))`.",
        "`m_new = torch.maximum(m, torch.amax(s, dim=2))`, `alpha = torch.exp(m - m_new)`, "
        "`p = torch.exp(s - m_new[:, :, None])`, `l = l * alpha + p.sum(dim=2)`, "
        "`acc = hl.dot(p.to(v.dtype), v_view[tile_bh, tile_k, :], acc=acc * alpha[:, :, None])`; then `m` "
        "moves on to `m_new`.",
        "After the key loop, store `acc / l[:, :, None]`, cast to `o.dtype`, into `o_view[tile_bh, tile_q, :]`, "
        "and `m + torch.log(l)` into `lse_view[tile_bh, tile_q]`.",
    ),
    look_alikes=(
        LookAlike("the running maximum raised without rescaling the running sum and output",
                  _no_rescale, "when a key tile raises the maximum from m to m_new, multiply `l` and `acc` "
                  "by `torch.exp(m - m_new)` before adding the new tile"),
        LookAlike("the causal mask hiding the diagonal (key < query, where it must be key <= query)",
                  _diagonal_hidden, "query row 0 of every head then sees no key at all, so its softmax is "
                  "0 / 0 (NaN), and every later row misses its own key. A query always sees itself: "
                  "`tile_k.index[None, None, :] <= tile_q.index[None, :, None]`"),
    ),
    # Puzzle 31's headline and sweep (causal, bf16 on the GPU), against PyTorch's SDPA.
    bench=Bench(
        sizes=({"B": 2, "H": 16, "NQ": 8192, "NK": 8192, "D": 128}, {"B": 8, "H": 16, "NQ": 2048, "NK": 2048, "D": 128},
               {"B": 4, "H": 16, "NQ": 4096, "NK": 4096, "D": 128}, {"B": 4, "H": 32, "NQ": 4096, "NK": 4096, "D": 64}),
        blocks={"BH": 1, "BQ": 128, "BK": 64},
        launch={"num_warps": 8, "num_stages": 3},
        dtypes={"q": "bfloat16", "k": "bfloat16", "v": "bfloat16", "o": "bfloat16"},
        bytes=lambda s: 2 * s["B"] * s["H"] * (2 * s["NQ"] * s["D"] + 2 * s["NK"] * s["D"]) + 4 * s["B"] * s["H"] * s["NQ"],
        # Two matmuls of 2 * NQ * NK * D each; causal needs half.
        flops=lambda s: 2 * s["B"] * s["H"] * s["NQ"] * s["NK"] * s["D"],
        baseline=_sdpa,
        baseline_name="SDPA",
        baseline_outputs=("o",),
    ),
)
