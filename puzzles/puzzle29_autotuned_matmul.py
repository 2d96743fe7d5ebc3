r"""
# Puzzle 29: Autotuned matmul

The matmul of puzzle 28 again, $c = a\,b$ with fp16 inputs, an fp32 accumulator and an
fp16 result, the same signature, strides, grid and grouped program order. What changes is
**who picks the tile sizes**: here you give `@triton.autotune` a few candidate configs and
Triton picks the fastest on the GPU it runs on.

```python
@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8},
                      num_warps=8, num_stages=3),
        ...
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(...):
```

**What autotuning does.** The first time the kernel is launched with a new value of the
`key` arguments, Triton compiles and times every config on that launch's tensors, keeps
the fastest, and reuses it for every later launch with the same key. The timing runs the
kernel many times on the real tensors: harmless here, since `c` is only ever stored to, but a
kernel that adds into its output would need `reset_to_zero=["c_ptr"]`. Each config sets the
`tl.constexpr` parameters it names (the block sizes and `GROUP_M` here), plus `num_warps`
(the threads of a program, in groups of 32) and `num_stages` (how many K chunks are loaded
ahead while the tensor cores work on the current one: more hides memory latency, but each
stage holds a tile of `a` and of `b` in shared memory).

**The key.** `key=["M", "N", "K"]` retunes whenever the shape changes: the best tile for an
8192³ product is not the best for 2048 × 1024 × 4096. Leave a size out and a config tuned
for one shape is reused for another; put in something that changes at every call and the
kernel is retuned, at the cost of timing every config, at every call.

**Every config must be correct.** Which config wins depends on the GPU, the shape and timing
noise, so a config that is wrong on some shape is a bug that shows only on some machines.
The grader therefore runs **every** config, on every case, and grades each run, in the
interpreter and on a GPU alike (there below the autotuner, as the autotuner launches its
choice): a failure names the config. A kernel that is right only when `BLOCK_K` divides `K`,
or a config that leaves out a constexpr the kernel needs, fails here.
Most cases are small (the same tails in M, N and K as puzzle 28), so a config of
128 × 256 tiles covers a case with one or two programs, and every config runs in seconds; one
case has a long `K` (over 1000, more chunks than any config's `BLOCK_K` could unroll) and a
column-major `b` past 16-bit offsets.

How the grader launches it: it passes the pointers, `M`, `N`, `K` and the strides, never the
block sizes (they come from the config Triton picks; passing them too is an error), and
computes the grid from the chosen config, as your own launcher would with
`grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)`.
**Pruning.** `prune_configs_by={"early_config_prune": keep}`, with `keep(configs, named_args,
**kwargs)` defined in the same file, drops configs before tuning, as Triton's own matmul does
for tiles larger than the product. The grader runs it as Triton would, on tensors that have
shapes and dtypes but no values, and grades every config it keeps; it must keep at least one
for every size (Triton stops otherwise), so pruning to the configs whose `BLOCK_K` divides `K`
leaves none for `K = 100`. `keep` may use its arguments, arithmetic, comparisons, loops and
comprehensions. Hooks and `perf_model` run your Python with the kernel's tensors, so the grader
refuses them.

For speed on an H100, start from tiles of 128 × 256 or 128 × 128 with `BLOCK_K = 64`,
8 warps, 3 or 4 stages and `GROUP_M = 8`, and add a smaller tile for small products.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float16
from torch import Tensor

from grader.puzzle import Bench, Case, Mistake, Puzzle, cdiv


def spec(a: Float16[Tensor, "M K"], b: Float16[Tensor, "K N"]) -> Float16[Tensor, "M N"]:
    # fp16 products are exact in fp32: sum them in fp32 and round once, at the end.
    return (a.float() @ b.float()).to(torch.float16)


# ---- your part: choose the configs and finish the kernel -------------------------
@triton.autotune(
    configs=[
        # triton.Config({"BLOCK_M": ..., "BLOCK_N": ..., "BLOCK_K": ..., "GROUP_M": ...},
        #               num_warps=..., num_stages=...),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


def _grid(s):
    # The blocks come from the config being run. Where no config is chosen yet (the plan a
    # report shows), count tiles of 16, the smallest a GPU's tl.dot takes.
    return (cdiv(s["M"], s.get("BLOCK_M", 16)) * cdiv(s["N"], s.get("BLOCK_N", 16)),)


PUZZLE = Puzzle(
    id="puzzle29",
    title="Autotuned matmul",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="matmul_kernel",
    output="c",
    grid=_grid,
    strides={"a": ("stride_am", "stride_ak"), "b": ("stride_bk", "stride_bn"), "c": ("stride_cm", "stride_cn")},
    # No blocks: every config gives its own, and each config is graded on every case.
    cases=(
        # No size a multiple of 16: every config has tails in M, N and K.
        Case("classic", sizes={"M": 70, "N": 45, "K": 100}, blocks={}),
        # K shorter than any sensible BLOCK_K.
        Case("k_smaller_than_block", sizes={"M": 48, "N": 40, "K": 24}, blocks={}, seed=1),
        # Several tiles for every config of up to 128 x 128, in more than one band.
        Case("several_tiles", sizes={"M": 200, "N": 150, "K": 72}, blocks={}, seed=2),
        Case("b_column_major", sizes={"M": 36, "N": 72, "K": 88}, blocks={}, seed=3, layouts={"b": "transposed"}),
        # Past anything a kernel could hard-code: K longer than 17 chunks of any config's BLOCK_K,
        # a column-major b past 16-bit offsets.
        Case("many_chunks", sizes={"M": 40, "N": 40, "K": 1100}, blocks={}, seed=4,
             layouts={"b": "transposed"}, large=True, vary={"M": (33, 64), "K": (1090, 1300)}),
        # a column-major, then a slice of a wider matrix: only the strides the kernel is passed tell.
        Case("a_column_major", sizes={"M": 72, "N": 36, "K": 40}, blocks={}, seed=5, layouts={"a": "transposed"}),
        Case("a_a_slice", sizes={"M": 40, "N": 24, "K": 48}, blocks={}, seed=6, layouts={"a": "row_strided"}),
    ),
    # As in puzzle 28: fp32 sums in another order can move c's rounding by one fp16 step.
    atol=1e-3,
    rtol=2e-3,
    hints=(
        "The kernel's body is puzzle 28's. Put every constexpr it uses (`BLOCK_M`, `BLOCK_N`, "
        "`BLOCK_K`, `GROUP_M`) in every config: the grader passes none of them.",
        "Three or four configs are enough, e.g. `triton.Config({'BLOCK_M': 128, 'BLOCK_N': 256, "
        "'BLOCK_K': 64, 'GROUP_M': 8}, num_warps=8, num_stages=3)`, the same with 128 x 128 tiles and "
        "`num_stages=4`, and `64 x 64 x 32` with `num_warps=4` for small products.",
        "Masks must not assume a config divides a size: mask the K lanes with `offs_k < K - k * BLOCK_K` "
        "and `other=0.0`, loop `tl.cdiv(K, BLOCK_K)` times, and mask the store on M and N.",
    ),
    mistakes=(
        Mistake(r"range\([^)]*K\s*//\s*BLOCK_K",
                "your loop runs `K // BLOCK_K` chunks: with a config whose `BLOCK_K` does not divide `K` the "
                "last, partial chunk is never added. Loop `tl.cdiv(K, BLOCK_K)` times and mask the K lanes."),
        Mistake(r"key\s*=\s*\[\s*\]",
                "`key=[]` tunes once, on the first shape, and reuses that config for every other shape: "
                "use `key=['M', 'N', 'K']`."),
    ),
    bench=Bench(
        sizes=({"M": 8192, "N": 8192, "K": 8192}, {"M": 4096, "N": 4096, "K": 4096},
               {"M": 2048, "N": 2048, "K": 2048},
               {"M": 8192, "N": 4096, "K": 14336}, {"M": 16384, "N": 1024, "K": 4096}),
        # The configs give the blocks, num_warps and num_stages; Triton tunes once per size.
        blocks={},
        bytes=lambda s: 2 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]),
        flops=lambda s: 2 * s["M"] * s["N"] * s["K"],
        baseline=lambda a, b: torch.matmul(a, b),
        baseline_name="torch.matmul (cuBLAS)",
        baseline_outputs=("c",),
    ),
)
