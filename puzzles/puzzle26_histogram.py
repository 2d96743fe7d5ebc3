r"""
# Puzzle 26: Histogram with atomics

Count how many elements of `x` fall in each of `NBINS` bins, as `torch.bincount` does.

$$z_b = \#\{\, n : \operatorname{bin}(x_n) = b \,\} \qquad \operatorname{bin}(v) = v \bmod \mathrm{NBINS} \in [0, \mathrm{NBINS})$$

`x` is a vector of `N` int32 values; `z` holds `NBINS` int32 counts and **starts as zeros**
(the wrapper allocates it with `torch.zeros`). The grader draws `x` as random 32-bit integers,
negative ones included, so an element's bin is its value modulo `NBINS`, taken in
`[0, NBINS)` as Python's `%` and `torch.remainder` give it. The grid has `cdiv(N, B0)`
programs: program `p` owns elements `p * B0` to `p * B0 + B0 - 1`.

**The new idea: atomics.** Here the programs do not own their outputs: every program may add
to every bin, and within one block several lanes may hit the same bin. A load, an add and a
store lose counts when two of them meet: both read 5, both write 6. `tl.atomic_add(ptrs, 1,
mask=mask)` does the read-modify-write as one indivisible step in memory, lane by lane,
so no update is lost whatever order the lanes and programs run in. The grader checks that:
it runs your programs in reverse order too, and reports two programs storing to one element
without an atomic as a race.

Atomics serialise where they collide. With few bins, many lanes hit each one; a faster
kernel first counts its block privately and then adds each bin's count to `z` once per
program: `tl.histogram(bins, NBINS, mask=mask)` does the private count when `NBINS` (a
`tl.constexpr` here) is a power of two. One atomic per element is the version to write first.

Traps:

* **Triton's `%` keeps the sign of `x`**, as in C: `-7 % 3` is `-1`, not `2`. Bring a negative
  remainder into range (add `NBINS`), or the atomic lands before the start of `z`.
* **The tail.** Masked lanes must not count: give the atomic the mask, not only the load. A
  padding lane loaded as 0 would otherwise add to bin 0.
* **No store.** `z` already holds the zeros; the kernel only adds to it.

**Sizes.** One case has 40000 elements, and a batch draws its sizes within a range, so fit
nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Int32
from torch import Tensor

from grader.puzzle import Bench, Case, LookAlike, Mistake, Puzzle, cdiv


def spec(x: Int32[Tensor, "N"], *, NBINS: int) -> Int32[Tensor, "NBINS"]:
    bins = torch.remainder(x, NBINS)  # in [0, NBINS), negative x included
    return torch.bincount(bins.long(), minlength=NBINS).to(torch.int32)


def _once_per_block(x, *, sizes):  # a look-alike: load, add 1, store: lanes of a block collide
    bins = torch.remainder(x, sizes["NBINS"]).long()
    z = torch.zeros(sizes["NBINS"], dtype=torch.int32)
    for block in torch.split(bins, sizes["B0"]):
        z[torch.unique(block)] += 1
    return z


def _padding_in_bin_0(x, *, sizes):  # a look-alike: the atomic unmasked, padding lanes loaded as 0
    z = spec(x, NBINS=sizes["NBINS"])
    z[0] += cdiv(x.numel(), sizes["B0"]) * sizes["B0"] - x.numel()
    return z


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def histogram_kernel(x_ptr, z_ptr, N, NBINS: tl.constexpr, B0: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------

PUZZLE = Puzzle(
    id="puzzle26",
    title="Histogram with atomics",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="histogram_kernel",
    grid=lambda s: (cdiv(s["N"], s["B0"]),),
    cases=(
        # Eight programs, the last one partly past the end.
        Case("classic", sizes={"N": 1000, "NBINS": 16}, blocks={"B0": 128}),
        Case("exact_multiple_of_block", sizes={"N": 512, "NBINS": 64}, blocks={"B0": 128}, seed=1),
        # Few bins: every block hits each bin many times.
        Case("few_bins", sizes={"N": 700, "NBINS": 3}, blocks={"B0": 64}, seed=2),
        Case("one_program", sizes={"N": 100, "NBINS": 10}, blocks={"B0": 128}, seed=3),
        Case("many_programs", sizes={"N": 2000, "NBINS": 37}, blocks={"B0": 32}, seed=4),
        # More bins than elements: most bins stay 0.
        Case("more_bins_than_elements", sizes={"N": 50, "NBINS": 256}, blocks={"B0": 16}, seed=5),
        # Past anything a kernel could hard-code: offsets past 16 bits, hundreds of programs.
        Case("past_16_bit_offsets", sizes={"N": 40000, "NBINS": 16}, blocks={"B0": 1024}, seed=6, large=True,
             vary={"N": (33000, 50000)}),
    ),
    atol=0,
    rtol=0,
    zeroed=("z",),
    hints=(
        "Many programs add into the same bins at once: only an atomic add is safe there. Mind Triton's "
        "remainder, which keeps the sign of a negative value.",
        "Program `p` loads `x_ptr + offs` with `offs = p * B0 + tl.arange(0, B0)` and `mask = offs < N`.",
        "`bins = x % NBINS`, then `bins = tl.where(bins < 0, bins + NBINS, bins)`: Triton's `%` keeps x's sign.",
        "`tl.atomic_add(z_ptr + bins, 1, mask=mask)`: no load of `z`, no store.",
    ),
    mistakes=(
        Mistake(r"%\s*NBINS(?![\s\S]*(?:\+\s*NBINS|<\s*0))",
                "your file takes `x % NBINS` and never corrects its sign. Triton's `%` keeps the sign of x, as C "
                "does (`-7 % 3` is `-1`), and the grader's x are often negative: add NBINS to a negative "
                "remainder, `bins = tl.where(bins < 0, bins + NBINS, bins)`."),
        Mistake(r"tl\.store\s*\(",
                "your kernel stores to `z` with `tl.store`. Bins are shared by every lane and every program: "
                "a load, add and store loses the updates of lanes or programs that hit the same bin at the "
                "same time. Add with `tl.atomic_add(z_ptr + bins, 1, mask=mask)` instead."),
    ),
    look_alikes=(
        LookAlike("each bin counted at most once per block (a load, +1 and store: colliding lanes lose updates)",
                  _once_per_block, "add with `tl.atomic_add(z_ptr + bins, 1, mask=mask)`, which no lane overwrites"),
        LookAlike("the tail's padding lanes counted in bin 0", _padding_in_bin_0,
                  "pass `mask=mask` to `tl.atomic_add` as well as to the load"),
    ),
    bench=Bench(
        sizes=({"N": 1 << 24, "NBINS": 256}, {"N": 1 << 24, "NBINS": 1024}, {"N": 1 << 22, "NBINS": 256},
               {"N": 1 << 26, "NBINS": 256}),
        # Large blocks: each program's private count ends in NBINS atomics, whatever B0 is.
        blocks={"B0": 8192},
        launch={"num_warps": 8},
        # Read x once; the counts are negligible.
        bytes=lambda s: 4 * s["N"] + 4 * s["NBINS"],
        # NBINS a power of two here: x & (NBINS - 1) is x mod NBINS, negative x included.
        baseline=lambda x, *, NBINS: torch.bincount(x & (NBINS - 1), minlength=NBINS),
        baseline_name="x & (NBINS - 1), then torch.bincount",
    ),
)
