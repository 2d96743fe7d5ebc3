r"""
# Puzzle 40: Matmul with an fp32 accumulator, in Helion

Puzzle 28 again: multiply two fp16 matrices, summing the products in fp32.

$$c_{i,j} = \sum_{k=0}^{K-1} a_{i,k}\, b_{k,j}$$

`a` is `M × K`, `b` is `K × N`, `c` is `M × N`, all fp16; `c` is rounded to fp16 once, at
the end. One case stores `b` column-major, another `a`.

**What Helion does for you.** Most of puzzle 28 was bookkeeping: the grouped numbering that
turned `pid` into `(pid_m, pid_n)`, the offsets `offs_m`, `offs_n`, `offs_k`, every address
as `row * stride_row + col * stride_col`, the masks on M, N and the K tail with `other=0.0`,
stepping the pointers by `BLOCK_K * stride_ak`, and choosing `BLOCK_M`, `BLOCK_N`,
`BLOCK_K`, `GROUP_M`, warps and stages. In Helion:

```python
for tile_m, tile_n in hl.tile([m, n]):      # the grid: one program per tile of c
    ...
    for tile_k in hl.tile(k):               # the K loop inside each program
        ... a[tile_m, tile_k] ... b[tile_k, tile_n] ...
```

The strides, the tails (the K tail too: Helion's masked lanes add nothing), the program
order and the tile sizes are Helion's; on a GPU it autotunes them, L2-friendly ordering
included. `hl.dot(a_tile, b_tile, acc=acc)` is `tl.dot(a, b, acc)`: on fp16 tiles it runs on
the tensor cores and adds the product into `acc`.

**What is still yours: the accumulator.**

* **fp32.** Create it with `hl.zeros([tile_m, tile_n], dtype=torch.float32)`, inside the
  output-tile loop and before the K loop. An fp16 accumulator rounds the running sum to 11
  significant bits at every chunk: one case sums 512 products per element, and is visibly off.
* **Once per output tile.** Created inside the K loop, it is a value of that loop alone, and
  Helion's compiler refuses to carry it out to the store.
* **Accumulate**: `acc = hl.dot(a[tile_m, tile_k], b[tile_k, tile_n], acc=acc)` (or
  `torch.addmm(acc, a_tile, b_tile)`, which Helion maps to the same dot). Without `acc=` each
  chunk's product replaces the sum, and only the last chunk is left.
* **Round once**: store `acc.to(torch.float16)` into `c[tile_m, tile_n]` after the K loop.

`torch.matmul(a, b)` before the loops is cuBLAS, not your kernel, and the grader says so.

**Sizes.** No size a multiple of its tile, `K` from 10 (less than one chunk) to 700.
"""
import helion
import helion.language as hl
import torch
from jaxtyping import Float16
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Mistake, Puzzle


def spec(a: Float16[Tensor, "M K"], b: Float16[Tensor, "K N"]) -> Float16[Tensor, "M N"]:
    # fp16 products are exact in fp32: sum them in fp32 and round once, at the end.
    return (a.float() @ b.float()).to(torch.float16)


def _last_chunk_only(a, b, *, sizes):  # a look-alike: each K chunk's product replaces the accumulator
    last = (sizes["K"] - 1) // sizes["BLOCK_K"] * sizes["BLOCK_K"]
    return (a[:, last:].float() @ b[last:, :].float()).to(torch.float16)


# ---- your part: finish the kernel ------------------------------------------------
@helion.kernel(autotune_effort="none")
def helion_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
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


PUZZLE = Puzzle(
    id="puzzle40",
    title="Matmul with an fp32 accumulator, in Helion",
    track="helion",
    statement=__doc__,
    spec=spec,
    kernel="helion_matmul",
    kind="helion",
    tiles={"BLOCK_M": "M", "BLOCK_N": "N", "BLOCK_K": "K"},
    grid=None,  # Helion launches one program per tile of the outer hl.tile loop
    output="c",
    cases=(
        # 3 x 2 tiles, four K chunks, the last one partial: every tail at once.
        Case("classic", sizes={"M": 70, "N": 45, "K": 100}, blocks=_blocks(32, 32, 32)),
        # K shorter than one chunk.
        Case("k_smaller_than_tile", sizes={"M": 48, "N": 40, "K": 10}, blocks=_blocks(32, 32, 32), seed=1),
        # 512 products per element: an fp16 accumulator rounds the running sum 32 times.
        Case("long_k", sizes={"M": 40, "N": 48, "K": 512}, blocks=_blocks(32, 32, 16), seed=2),
        Case("b_column_major", sizes={"M": 36, "N": 72, "K": 56}, blocks=_blocks(32, 32, 32), seed=3,
             layouts={"b": "transposed"}),
        Case("a_column_major", sizes={"M": 72, "N": 20, "K": 48}, blocks=_blocks(32, 16, 16), seed=4,
             layouts={"a": "transposed"}),
        # Past anything a kernel could hard-code: 18 or more chunks of K, offsets past 16 bits.
        Case("many_chunks", sizes={"M": 64, "N": 40, "K": 560}, blocks=_blocks(32, 32, 32), seed=5,
             large=True, vary={"M": (62, 80), "K": (545, 700)}),
    ),
    # c is fp16. A correct kernel differs from the spec only in the order of its fp32 sums,
    # which can move the final rounding by one fp16 step: at most 2^-10 of the value.
    atol=1e-3,
    rtol=2e-3,
    hints=(
        "One output tile per iteration of the outer loop, accumulated in fp32 over an inner loop of tiles of "
        "the shared dimension with `hl.dot`, and cast once, for the store.",
        "In the output-tile loop, create the fp32 accumulator with "
        "`hl.zeros([tile_m, tile_n], dtype=torch.float32)`, then loop `for tile_k in hl.tile(k)`.",
        "In the K loop: `acc = hl.dot(a[tile_m, tile_k], b[tile_k, tile_n], acc=acc)`. After it, store `acc` "
        "cast to fp16 into `c[tile_m, tile_n]`.",
    ),
    mistakes=(
        Mistake(r"hl\.(zeros|full)\([^\n]*float16",
                "your accumulator is fp16: it rounds the running sum to 11 significant bits at every chunk. "
                "Create it with `hl.zeros([tile_m, tile_n], dtype=torch.float32)` and cast to fp16 once, "
                "when you store it."),
    ),
    look_alikes=(
        LookAlike("a product of the last K chunk alone (the accumulator replaced, not added to, in every chunk)",
                  _last_chunk_only,
                  "add each chunk's product into the accumulator, `acc = hl.dot(a_tile, b_tile, acc=acc)`, "
                  "with `acc` created once per output tile, before `for tile_k in hl.tile(k)`"),
    ),
    bench=Bench(
        # Puzzle 28's sweep.
        sizes=({"M": 8192, "N": 8192, "K": 8192}, {"M": 4096, "N": 4096, "K": 4096},
               {"M": 2048, "N": 2048, "K": 2048},
               {"M": 8192, "N": 4096, "K": 14336}, {"M": 16384, "N": 1024, "K": 4096}),
        blocks=_blocks(128, 256, 64),
        launch={"num_warps": 8, "num_stages": 3},
        bytes=lambda s: 2 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]),
        flops=lambda s: 2 * s["M"] * s["N"] * s["K"],
        baseline=lambda a, b: torch.matmul(a, b),
        baseline_name="torch.matmul (cuBLAS)",
        baseline_outputs=("c",),
    ),
)
