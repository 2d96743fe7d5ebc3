r"""
# Puzzle 28: Tiled matmul on tensor cores, with grouped program order

Multiply two half-precision matrices, as every linear layer of a transformer does:

$$c_{i,j} = \sum_{k=0}^{K-1} a_{i,k}\, b_{k,j}$$

`a` is `M × K`, `b` is `K × N` and `c` is `M × N`, all fp16. The products are summed in
fp32 and `c` is rounded to fp16 once, at the end. The tensors are not necessarily
row-major: the kernel receives each one's strides, in elements (`stride_am`, `stride_ak`
for `a`, and so on), and must address every element as `row * stride_row + col * stride_col`.
One case stores `b` column-major.

The grid is one-dimensional, with `cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)` programs. Each
program owns one `BLOCK_M × BLOCK_N` tile of `c`: it walks along `K` in chunks of
`BLOCK_K`, loads a `BLOCK_M × BLOCK_K` tile of `a` and a `BLOCK_K × BLOCK_N` tile of `b`,
and adds their product (`tl.dot`) into an fp32 accumulator. **Which** tile program `pid`
owns is the second idea of this puzzle.

**Tensor cores.** `tl.dot` on fp16 tiles runs on the GPU's tensor cores, about 15 times the
throughput of ordinary fp32 arithmetic. Each product of two fp16 values is exact in fp32,
so accumulating in fp32 loses almost nothing; an fp16 accumulator would round the running
sum to 11 significant bits at every chunk. On a GPU each dimension of a `tl.dot` tile must
be at least 16.

**Grouped program order, for L2 reuse.** The GPU runs a wave of programs at the same
time, roughly in `pid` order: an H100 has 132 multiprocessors. Tile `(m, n)` reads the
whole row-panel `m` of `a` and the whole column-panel `n` of `b`; programs running
together that share a panel find it in the L2 cache instead of reading it from memory
again. Numbered row by row, nine programs running together on a row of nine tiles read 1
row-panel of `a` and 9 column-panels of `b`: 10 panels. Numbered in groups of
`GROUP_M = 3` rows, taken column by column, the same nine programs cover a 3 × 3 square of
tiles and read 3 + 3 = 6 panels. At 8192³ this is the difference between re-reading `b`
from memory and finding it in L2. The numbering:

```
tiles_m, tiles_n = cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)
group    = pid // (GROUP_M * tiles_n)          # which band of GROUP_M tile-rows
first_m  = group * GROUP_M
rows     = min(tiles_m - first_m, GROUP_M)     # the last band may be shorter
pid_m    = first_m + (pid % (GROUP_M * tiles_n)) % rows
pid_n    = (pid % (GROUP_M * tiles_n)) // rows
```

Every tile must be owned by exactly one program: some cases have a number of tile-rows
that `GROUP_M` does not divide, so the last band is shorter.

Traps the cases spring:

* **Tails in M and N.** No size is a multiple of its block: mask the loads and the store
  (or wrap row and column indices with `% M` and `% N` for the loads and mask the store).
* **The K tail.** The last chunk of `K` is partial; one case has `K < BLOCK_K`. Load the
  lanes past `K` as `other=0.0`, so they add `0 × b = 0`, and loop over
  `cdiv(K, BLOCK_K)` chunks, not `K // BLOCK_K`.
* **Long K.** One case sums 512 products per element: an fp16 accumulator is visibly off.
* **Layouts.** `b` is column-major in one case, `a` in another: use the strides.
* **Sizes.** One case has `K` of 560 (18 chunks), a column-major `a`, and
  a batch draws its sizes within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float16
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Mistake, Puzzle, cdiv


def spec(a: Float16[Tensor, "M K"], b: Float16[Tensor, "K N"]) -> Float16[Tensor, "M N"]:
    # fp16 products are exact in fp32: sum them in fp32 and round once, at the end.
    return (a.float() @ b.float()).to(torch.float16)


def _k_tail_dropped(a, b, *, sizes):  # a look-alike: the loop runs K // BLOCK_K chunks only
    whole = sizes["K"] // sizes["BLOCK_K"] * sizes["BLOCK_K"]
    return (a[:, :whole].float() @ b[:whole, :].float()).to(torch.float16)


def _strides_ignored(a, b, *, layouts):  # a look-alike: a and b read as if row-major
    def as_read(x, name):  # a column-major x read row by row: its memory, reshaped
        return x.t().contiguous().view(x.shape) if layouts.get(name) == "transposed" else x
    return (as_read(a, "a").float() @ as_read(b, "b").float()).to(torch.float16)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


def _blocks(m, n, k, group):
    return {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": group}


PUZZLE = Puzzle(
    id="puzzle28",
    title="Tiled matmul on tensor cores, with grouped program order",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="matmul_kernel",
    output="c",
    grid=lambda s: (cdiv(s["M"], s["BLOCK_M"]) * cdiv(s["N"], s["BLOCK_N"]),),
    strides={"a": ("stride_am", "stride_ak"), "b": ("stride_bk", "stride_bn"), "c": ("stride_cm", "stride_cn")},
    # Three block configurations in all: the GPU compile check compiles each once.
    cases=(
        # 3 x 2 tiles, four K chunks, the last one partial: every tail at once.
        Case("classic", sizes={"M": 70, "N": 45, "K": 100}, blocks=_blocks(32, 32, 32, 2)),
        # The whole product is one tile and the blocks fit exactly: an off-by-one mask shows.
        Case("single_tile", sizes={"M": 32, "N": 32, "K": 64}, blocks=_blocks(32, 32, 32, 2), seed=1),
        # K shorter than one chunk: a loop over K // BLOCK_K chunks does nothing at all.
        Case("k_smaller_than_block", sizes={"M": 48, "N": 40, "K": 10}, blocks=_blocks(32, 32, 32, 2), seed=2),
        # 5 x 3 tiles in bands of GROUP_M = 2 rows: the last band has one row.
        Case("short_last_group", sizes={"M": 80, "N": 40, "K": 40}, blocks=_blocks(16, 16, 16, 2), seed=3),
        # 512 products per element: an fp16 accumulator rounds the running sum 32 times.
        Case("long_k", sizes={"M": 40, "N": 48, "K": 512}, blocks=_blocks(32, 32, 16, 2), seed=4),
        # b stored column-major (stride_bk = 1, stride_bn = K): only the strides tell.
        Case("b_column_major", sizes={"M": 36, "N": 72, "K": 56}, blocks=_blocks(32, 32, 32, 2), seed=5,
             layouts={"b": "transposed"}),
        Case("a_column_major", sizes={"M": 72, "N": 20, "K": 48}, blocks=_blocks(32, 32, 16, 2), seed=6,
             layouts={"a": "transposed"}),
        # Past anything a kernel could hard-code: 18 or more chunks of K, a column-major a past 16-bit offsets.
        Case("many_chunks", sizes={"M": 64, "N": 40, "K": 560}, blocks=_blocks(32, 32, 32, 2), seed=7,
             layouts={"a": "transposed"}, large=True, vary={"M": (62, 80), "K": (545, 700)}),
        # K past any unroll (129 or more chunks), a sample of the tiles run.
        Case("k_past_any_unroll", sizes={"M": 136, "N": 72, "K": 4100}, blocks=_blocks(32, 32, 32, 2), seed=8,
             layouts={"b": "transposed"}, large=True, vary={"K": (4097, 5000)}),
        # a a slice of a wider matrix: its rows start 16 elements past the previous row's end.
        Case("a_a_slice", sizes={"M": 40, "N": 24, "K": 56}, blocks=_blocks(32, 32, 16, 2), seed=9,
             layouts={"a": "row_strided"}),
    ),
    # c is fp16. A correct kernel differs from the spec only in the order of its fp32 sums,
    # which can move the final rounding by one fp16 step: at most 2^-10 of the value.
    atol=1e-3,
    rtol=2e-3,
    hints=(
        "One tile of `c` per program, accumulated in fp32 over `K` in chunks with `tl.dot`; the grouped order "
        "of the statement only changes which tile a program id maps to.",
        "Start from `pid_m, pid_n` (the grouped numbering in the statement), then "
        "`offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)`, `offs_n` likewise and "
        "`offs_k = tl.arange(0, BLOCK_K)`. The `a` tile's addresses are "
        "`a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak`.",
        "Make `acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)` and loop "
        "`for k in range(0, tl.cdiv(K, BLOCK_K)):`. Mask each load with the rows (or columns) "
        "in range and `offs_k < K - k * BLOCK_K`, with `other=0.0`; then `acc = tl.dot(a, b, acc)` "
        "and step the pointers by `BLOCK_K * stride_ak` and `BLOCK_K * stride_bk`.",
        "After the loop store `acc.to(tl.float16)` at "
        "`c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn` with "
        "`mask=(offs_m[:, None] < M) & (offs_n[None, :] < N)`.",
    ),
    mistakes=(
        Mistake(r"range\([^)]*K\s*//\s*BLOCK_K",
                "your loop runs `K // BLOCK_K` chunks: when `BLOCK_K` does not divide `K` the last, partial "
                "chunk is never added. Loop `tl.cdiv(K, BLOCK_K)` times and mask the K lanes with `other=0.0`."),
        Mistake(r"tl\.zeros\([^\n]*float16|out_dtype\s*=\s*tl\.float16",
                "your accumulator is fp16: it rounds the running sum to 11 significant bits at every chunk. "
                "Accumulate in `tl.float32` and cast to fp16 once, at the store."),
    ),
    look_alikes=(
        LookAlike("a product that drops the last, partial K chunk (a loop over K // BLOCK_K chunks)",
                  _k_tail_dropped,
                  "loop `for k in range(0, tl.cdiv(K, BLOCK_K))` and mask the lanes past K with `other=0.0`"),
        LookAlike("a and b read as if row-major (their strides ignored)", _strides_ignored,
                  "address the tiles through the strides you are given: "
                  "`offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak` for `a`, and likewise for `b`"),
    ),
    bench=Bench(
        sizes=({"M": 8192, "N": 8192, "K": 8192}, {"M": 4096, "N": 4096, "K": 4096},
               {"M": 2048, "N": 2048, "K": 2048},
               # An LLM's feed-forward down-projection, and a tall-skinny product.
               {"M": 8192, "N": 4096, "K": 14336}, {"M": 16384, "N": 1024, "K": 4096}),
        blocks=_blocks(128, 256, 64, 8),
        launch={"num_warps": 8, "num_stages": 3},
        # Least traffic: read a and b once, write c once (fp16). The figure that matters for a
        # matmul is FLOP/s: 2 * M * N * K floating-point operations.
        bytes=lambda s: 2 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]),
        flops=lambda s: 2 * s["M"] * s["N"] * s["K"],
        baseline=lambda a, b: torch.matmul(a, b),
        baseline_name="torch.matmul (cuBLAS)",
        # At K up to 14336 cuBLAS's own error sets the tolerance (grader/judge/bench/tolerance.py).
        baseline_outputs=("c",),
    ),
)
