r"""
# Puzzle 27: Dropout with a seeded random mask

Zero each element of `x` with probability $p$ and scale the survivors by $\frac{1}{1-p}$, so
that every element keeps its expected value:

$$z_{i,j} = \begin{cases} \dfrac{x_{i,j}}{1-p} & \text{if } u_{i,j} > p \\[4pt] 0 & \text{otherwise}
\end{cases}
\qquad p = \texttt{P\_PERCENT} / 100$$

where $u_{i,j}$ is a uniform random number in $[0, 1)$ drawn for element $(i, j)$ from `SEED`.

`x` and `z` have shape `(N0, T)` and are stored row by row. The grid
is `(N0, cdiv(T, B1))`: program `(i, j)` owns columns `j * B1` to `j * B1 + B1 - 1` of row `i`
(`B1` a power of two, at least 4). `SEED` (a non-negative 32-bit integer) and `P_PERCENT`
(p = 0.25 is `P_PERCENT = 25`) come as plain integer parameters; `P_PERCENT / 100` in the
kernel is p in fp32.

**The new idea: a counter-based random generator.** `tl.rand(seed, counters)` and
`tl.rand4x(seed, counters)` run Philox on each pair (seed, counter): no state is kept or
advanced, so any program can draw the numbers of any element, in any order, and the same seed
always gives the same numbers. Three things follow:

* **The mask is never stored.** The backward of dropout is $\partial x = \partial z$ where the
  element was kept, scaled by $\frac{1}{1-p}$, and 0 elsewhere: *this same kernel*, run on the
  upstream gradient with the same seed. Saving the seed (one integer) instead of the mask
  saves writing and reading a whole tensor, as fused attention kernels do for their dropout.
  So the mask must be a function of the seed and the element alone: not of the program that
  draws it, nor of `B1`.
* **The counter names the elements.** Give each element a counter of its own, e.g. its flat
  index `i * T + j`. Counters taken from the column alone would give every row the same mask;
  counters that restart in every block, every block the same mask.
* **The seed is the caller's.** Another step of training passes another seed; a kernel that
  ignores `SEED` drops the same elements every time.

**How the grader checks it.** Which elements a correct dropout drops is its generator's choice,
so there is no one right `z`: each case is graded by what every correct dropout does. The kept
elements are $x/(1-p)$ (to the output's rounding) and the dropped ones 0; in every case but the
largest, the kernel run again gives the same `z`, run with `B1` halved it gives the same `z` (a
function of the element, not of the program), and run with another `SEED` it drops other
elements; the fraction kept is $1 - p$,
overall and in every row, within 6 standard deviations of a fair coin's count (a correct
kernel misses that bound less than once in 100 million cases); and neighbours, along a row and
down a column, are kept independently of each other (their correlation within 6 standard
errors of 0).

**Which stream, and why four words a draw.** `tl.rand(SEED, i * T + j)`, the Triton
tutorial's dropout, is correct. One Philox draw, though, is ten rounds of 32-bit multiplies,
which costs the GPU more than moving the element it decides: a kernel that draws once per
element (`tl.rand` keeps the first of the draw's four words and throws three away) is bound by
its integer units at under half of the copy bandwidth. PyTorch's own dropout keeps all four
words of each draw, and so does the course's solution: row `i` has `cdiv(T, 4)` draws of its
own, numbered from `i * cdiv(T, 4)`, and draw `q` of the row gives columns `4q` to `4q + 3`,
word `k` to column `4q + k`:

$$u_{i,j} = r_{j \bmod 4} \quad\text{where}\quad (r_0, r_1, r_2, r_3) =
\texttt{tl.rand4x}\big(\texttt{SEED},\ i \cdot \lceil T / 4 \rceil + \lfloor j / 4 \rfloor\big)$$

A block of `B1` columns starts at a multiple of 4, so it needs only `B1 / 4` draws; the four
words come back as four vectors of `B1 / 4`, and column `4q + k` of the block takes word `k` of
the block's draw `q`. Either stream passes; a kernel drawing once per element gets a note.

Traps: compare with `>` (keep where $u > p$, so that about a fraction $1 - p$ survives);
divide the survivors by $1 - p$; compute in fp32 and store in the output's dtype
(cases run in fp32, fp16 and bf16); mask the tail of each row.

**Sizes.** One case has 33 rows of 1000 (offsets past 16 bits), and a batch draws its sizes
within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

import math

from grader.puzzle import Bench, Case, Check, LookAlike, Puzzle, cdiv

def spec(x: Float32[Tensor, "N0 T"], *, SEED: int, P_PERCENT: int) -> Float32[Tensor, "N0 T"]:
    """The statement's reference stream (`tl.rand4x`, word `j % 4`): one correct dropout of many."""
    def tl_rand4x(seed: int, counters: Tensor) -> list[Tensor]:
        """tl.rand4x(seed, counters) for int32 counters and a seed below 2**31: Philox 4x32 with
        10 rounds, each of its four words turned into a float in [0, 1); uint32 arithmetic in int64."""
        M32 = 0xFFFFFFFF

        def mul_hi_lo(a: int, b: Tensor):  # the high and low 32 bits of a * b, without overflow
            top, bottom = a * (b >> 16), a * (b & 0xFFFF)
            low = ((top & 0xFFFF) << 16) + bottom
            return (top >> 16) + (low >> 32), low & M32

        c0 = counters.to(torch.int64) & M32
        c1, c2, c3 = (torch.zeros_like(c0) for _ in range(3))
        k0, k1 = seed & M32, (seed >> 32) & M32
        for _ in range(10):
            hi_b, lo_b = mul_hi_lo(0xCD9E8D57, c2)
            hi_a, lo_a = mul_hi_lo(0xD2511F53, c0)
            c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        words = []
        for word in (c0, c1, c2, c3):
            signed = torch.where(word >= 2**31, word - 2**32, word)  # the word read as an int32
            signed = torch.where(signed < 0, -signed - 1, signed)
            words.append(signed.to(torch.float32) * torch.tensor(4.6566127342e-10, dtype=torch.float32))
        return words

    rows, cols = (torch.arange(n, dtype=torch.int32, device=x.device) for n in x.shape)
    draws_per_row = (x.shape[1] + 3) // 4  # cdiv(T, 4)
    words = tl_rand4x(SEED, rows[:, None] * draws_per_row + cols[None, :] // 4)
    word = (cols % 4).long().expand(x.shape).unsqueeze(-1)
    u = torch.stack(words, dim=-1).gather(-1, word).squeeze(-1)  # column j takes word j % 4
    p = torch.tensor(P_PERCENT, dtype=torch.float32) / 100  # in fp32, as the kernel divides
    return torch.where(u > p, x.float() / (1 - p), 0.0).to(x.dtype)


def _kept(x, sizes):  # where the spec keeps an element: its mask, from an input of ones
    ones = torch.ones(x.shape, dtype=torch.float32, device=x.device)
    return spec(ones, SEED=sizes["SEED"], P_PERCENT=sizes["P_PERCENT"]) != 0


def _scaled_where(keep, x, sizes):
    p = torch.tensor(sizes["P_PERCENT"], dtype=torch.float32) / 100
    return torch.where(keep, x.float() / (1 - p), 0.0).to(x.dtype)


def _drawn_at(x, sizes, draw, word):  # kept where word `word` of Philox draw `draw` exceeds p
    row = torch.ones((1, 4 * x.numel() + 4), dtype=torch.float32, device=x.device)  # column 4c + k: word k of draw c
    keep = spec(row, SEED=sizes["SEED"], P_PERCENT=sizes["P_PERCENT"])[0] != 0
    return keep[4 * draw + word]


def _rows_cols(x):
    rows, cols = (torch.arange(n, device=x.device) for n in x.shape)
    return rows[:, None], cols[None, :]


def _one_draw_per_element(x, *, sizes):  # a look-alike: tl.rand(SEED, i * T + j), the first word of a draw each
    i, j = _rows_cols(x)
    return _scaled_where(_drawn_at(x, sizes, i * x.shape[1] + j, 0), x, sizes)


def _counter_not_divided(x, *, sizes):  # a look-alike: word j % 4 of draw i * T + j, not of draw j // 4 of the row
    i, j = _rows_cols(x)
    return _scaled_where(_drawn_at(x, sizes, i * x.shape[1] + j, j % 4), x, sizes)


def _rows_overlap(x, *, sizes):  # a look-alike: rows T // 4 draws apart, not cdiv(T, 4)
    i, j = _rows_cols(x)
    return _scaled_where(_drawn_at(x, sizes, i * (x.shape[1] // 4) + j // 4, j % 4), x, sizes)


def _seed_ignored(x, *, sizes):  # a look-alike: tl.rand4x(0, counters), whatever the seed
    return spec(x, SEED=0, P_PERCENT=sizes["P_PERCENT"])


def _one_mask_for_all_rows(x, *, sizes):  # a look-alike: the counters come from the column alone
    return _scaled_where(_kept(x, sizes)[:1].expand(x.shape), x, sizes)  # row 0's counters are its columns'


def _offsets_per_block(x, *, sizes):  # a look-alike: the counters restart at 0 in every block
    cols = torch.arange(x.shape[1], device=x.device) % sizes["B1"]
    return _scaled_where(_kept(x, sizes)[0, cols].expand(x.shape), x, sizes)


def _unscaled(x, *, sizes):  # a look-alike: the survivors not divided by 1 - p
    return torch.where(_kept(x, sizes), x, 0.0).to(x.dtype)


def _inverted(x, *, sizes):  # a look-alike: kept where u < p, dropped where u > p
    return _scaled_where(~_kept(x, sizes), x, sizes)


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------

HALF = {"x": "float16", "z": "float16"}
BF16 = {"x": "bfloat16", "z": "bfloat16"}

HINTS = (
    "A counter-based generator: a draw depends only on `SEED` and a counter, so each element needs a counter "
    "of its own, the same on every run. One `tl.rand4x` draw gives four numbers.",
    "Program `(i, j)`: `cols = j * B1 + tl.arange(0, B1)`, `mask = cols < T`, and the flat offsets "
    "`i * T + cols` to address x and z.",
    "The block's draws: `q = j * (B1 // 4) + tl.arange(0, B1 // 4)` and `r0, r1, r2, r3 = "
    "tl.rand4x(SEED, i * tl.cdiv(T, 4) + q)`. Interleave them so that column `4q + k` gets word `k`: "
    "`u = tl.reshape(tl.join(tl.join(r0, r2), tl.join(r1, r3)), [B1])` (`tl.join(a, b)` pairs "
    "elements along a new last axis). (`u = tl.rand(SEED, i * T + cols)` is correct too, and draws four "
    "times as often.)",
    "`p = P_PERCENT / 100`; `z = tl.where(u > p, x / (1 - p), 0.0)` with x loaded as fp32, stored "
    "with the mask.",
)

LOOK_ALIKES = (
    LookAlike("the mask drawn with seed 0 (SEED ignored)", _seed_ignored,
              "pass the kernel's `SEED` to `tl.rand4x`: each training step draws another mask"),
    LookAlike("one mask for every row (the random counters come from the column alone)", _one_mask_for_all_rows,
              "start row `i`'s draws at `i * tl.cdiv(T, 4)`"),
    LookAlike("one mask for every block (the random counters restart at 0 in each block)", _offsets_per_block,
              "number the block's draws from its first column: `j * (B1 // 4) + tl.arange(0, B1 // 4)`, "
              "not `tl.arange` alone"),
    LookAlike("the kept values not scaled by 1 / (1 - p)", _unscaled,
              "divide the survivors by `1 - p`, so that each element keeps its expected value"),
    LookAlike("the mask inverted (kept where the random number is below p)", _inverted,
              "keep where `u > p`: an element survives with probability 1 - p"),
)

# Correct dropouts that draw another stream than the statement's: a note beside the pass.
NOTES = (
    LookAlike("one Philox draw per element, its first word (`tl.rand(SEED, i * T + j)`)", _one_draw_per_element,
              "correct, and four times as many draws as needed: `tl.rand4x(SEED, i * cdiv(T, 4) + j // 4)` "
              "gives four columns their words at once", faster=True),
    LookAlike("word j % 4 of draw i * T + j (the counter not divided by 4)", _counter_not_divided,
              "correct, and four times as many draws as needed: four columns can share a draw, "
              "`i * cdiv(T, 4) + j // 4`", faster=True),
    LookAlike("rows T // 4 draws apart, not cdiv(T, 4) (a row's last draw shared with the next)", _rows_overlap,
              "where T is not a multiple of 4, a row's last columns and the next row's first take the same "
              "words, so their masks are equal: start row `i`'s draws at `i * tl.cdiv(T, 4)`"),
)

# ---- graded by properties: every correct dropout passes, whichever stream it draws ----------------
SIGMAS = 6  # a correct kernel's count misses +-6 standard deviations with probability below 2e-9


def _dropout_expect(run):
    """What the run should have written given its own mask: x / (1 - p) where it wrote anything
    but 0, 0 elsewhere (a kept element of x == 0 reads as dropped, which changes nothing)."""
    (x,), (z,) = run.inputs, run.outputs
    p = torch.tensor(run.values["P_PERCENT"], dtype=torch.float32) / 100
    return (torch.where(z != 0, x.float() / (1 - p), 0.0).to(x.dtype),)


def _kept_mask(run):
    """(kept, counted): the elements written non-zero, among those whose x is not 0."""
    (x,), (z,) = run.inputs, run.outputs
    return z != 0, x != 0


def _rate(kept, counted, q, what):
    n, k = int(counted.sum()), int((kept & counted).sum())
    if not n:
        return None
    spread = SIGMAS * math.sqrt(n * q * (1 - q)) + 1
    if abs(k - n * q) <= spread:
        return None
    return (f"{what + ' ' if what else ''}yours keeps {k} of {n} elements ({100 * k / n:.1f}%), expected a fraction 1 - p = "
            f"{100 * q:.0f}% of them, within {100 * spread / n:.1f} points ({SIGMAS} standard deviations of a "
            f"correct dropout's count). Keep where `u > p`, with `u` uniform in [0, 1).")


def _correlation(a, b):
    """Pearson's correlation of two boolean tensors, and the pairs it is over (None if either is constant)."""
    a, b = a.reshape(-1).double(), b.reshape(-1).double()
    if a.numel() < 64 or a.std() == 0 or b.std() == 0:
        return None, a.numel()
    return float(((a - a.mean()) * (b - b.mean())).mean() / (a.std(unbiased=False) * b.std(unbiased=False))), a.numel()


def _independent(kept, counted):
    for where, a, b, both in (
            ("along the rows (element j and j + 1)", kept[:, :-1], kept[:, 1:], counted[:, :-1] & counted[:, 1:]),
            ("down the columns (row i and i + 1)", kept[:-1], kept[1:], counted[:-1] & counted[1:])):
        r, pairs = _correlation(a[both], b[both])
        if r is not None and abs(r) > SIGMAS / math.sqrt(pairs):
            return (f"yours keeps neighbours {where} together or apart far more often than chance: their masks' "
                    f"correlation is {r:.2f} over {pairs} pairs, expected about 0 (within {SIGMAS / math.sqrt(pairs):.2f}). "
                    f"Draw each element's number from a counter of its own: the flat index `i * T + j`, or "
                    f"`i * cdiv(T, 4) + j // 4` with word `j % 4`.")
    return None


def _dropout_judge(runs):
    first = runs[0]
    kept, counted = _kept_mask(first)
    q = 1 - first.values["P_PERCENT"] / 100
    said = _rate(kept, counted, q, "")
    if said is None:  # each row: the rows' counts at once, the first out of bounds worded
        n, k = counted.sum(1).double(), (kept & counted).sum(1).double()
        out = ((k - n * q).abs() > SIGMAS * (n * q * (1 - q)).sqrt() + 1).nonzero().flatten()
        said = _rate(kept[out[0]], counted[out[0]], q, f"in row {int(out[0])},") if len(out) else None
    said = said or _independent(kept, counted)
    for run in runs[1:] if said is None else ():
        changed = {k: v for k, v in run.values.items() if first.values.get(k) != v}
        told = ", ".join(f"{k}={v}" for k, v in changed.items())
        again_kept, _ = _kept_mask(run)
        if "SEED" in changed:
            r, pairs = _correlation(kept[counted], again_kept[counted])
            same = bool((kept[counted] == again_kept[counted]).all())
            if same or (r is not None and abs(r) > SIGMAS / math.sqrt(pairs)):
                return (f"with {told} (SEED={first.values['SEED']} before), yours drops "
                        f"{'the same elements' if same else 'nearly the same elements (correlation ' + f'{r:.2f})'}, "
                        f"expected another mask: the mask is a function of the seed and the element, so pass "
                        f"`SEED` to the generator.")
        elif not torch.equal(run.outputs[0].view(torch.uint8), first.outputs[0].view(torch.uint8)):
            moved = int((again_kept != kept).sum())
            how = f"with {told} instead of " + ", ".join(f"{k}={first.values[k]}" for k in changed) if changed \
                else "run again with the same values"
            return (f"{how}, yours wrote another z ({moved} elements kept in one run and dropped in the other), "
                    f"expected the same: the mask must be a function of the seed and the element alone, not of "
                    f"the program that draws it, its block or the run, so that the backward redraws it.")
    return said


def _dropout_reruns(values):
    """The same again; B1 halved (or doubled from 4); another seed."""
    block = values["B1"] // 2 if values["B1"] >= 8 else values["B1"] * 2
    return ({}, {"B1": block}, {"SEED": (values["SEED"] + 1_000_003) % 2**31})


PUZZLE = Puzzle(
    id="puzzle27",
    title="Dropout with a seeded random mask",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="dropout_kernel",
    grid=lambda s: (s["N0"], cdiv(s["T"], s["B1"])),
    cases=(
        Case("classic", sizes={"N0": 4, "T": 100, "SEED": 1234, "P_PERCENT": 50}, blocks={"B1": 64}),
        Case("row_fills_block", sizes={"N0": 3, "T": 64, "SEED": 42, "P_PERCENT": 25}, blocks={"B1": 64}, seed=1),
        Case("one_row", sizes={"N0": 1, "T": 300, "SEED": 987654321, "P_PERCENT": 10}, blocks={"B1": 128}, seed=2),
        # Many rows in one block each: a mask drawn from the column alone repeats on every row.
        # Rows of 22: their draws must be cdiv(22, 4) = 6 apart, the last two words of each row's last
        # draw unused.
        Case("many_rows", sizes={"N0": 32, "T": 22, "SEED": 7, "P_PERCENT": 30}, blocks={"B1": 32}, seed=3),
        Case("most_dropped", sizes={"N0": 4, "T": 50, "SEED": 2**31 - 1, "P_PERCENT": 90}, blocks={"B1": 32}, seed=4),
        # The same input and p as classic, another seed: another mask.
        Case("another_seed", sizes={"N0": 4, "T": 100, "SEED": 99999, "P_PERCENT": 50}, blocks={"B1": 64}),
        Case("fp16_rows", sizes={"N0": 8, "T": 501, "SEED": 31337, "P_PERCENT": 20}, blocks={"B1": 256}, seed=5,
             dtypes=HALF),
        Case("bf16_rows", sizes={"N0": 8, "T": 200, "SEED": 2024, "P_PERCENT": 40}, blocks={"B1": 128}, seed=6,
             dtypes=BF16),
        # Past anything a kernel could hard-code: offsets past 16 bits.
        Case("past_16_bit_offsets", sizes={"N0": 33, "T": 1000, "SEED": 4242, "P_PERCENT": 30},
             blocks={"B1": 1024}, seed=7, dtypes=HALF, large=True, vary={"N0": (33, 48), "T": (1000, 1200)}),
    ),
    # A survivor is x / (1 - p), which may round differently by an ulp; which survive is the kernel's choice.
    atol=1e-6,
    rtol=1e-6,
    tolerances={"float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)},
    hints=HINTS,
    look_alikes=LOOK_ALIKES,
    check=Check(expect=_dropout_expect, judge=_dropout_judge, reruns=_dropout_reruns, notes=NOTES),
    bench=Bench(
        sizes=({"N0": 4096, "T": 8192, "SEED": 1234, "P_PERCENT": 10},
               {"N0": 4096, "T": 1024, "SEED": 1234, "P_PERCENT": 10},
               {"N0": 16384, "T": 4096, "SEED": 1234, "P_PERCENT": 10}),
        # 1024 columns a program: within 2 % of the best tile at every size of the sweep on an H100.
        blocks={"B1": 1024},
        # Read x once, write z once, fp16; the mask is never stored.
        bytes=lambda s: 2 * 2 * s["N0"] * s["T"],
        baseline=lambda x, *, P_PERCENT: torch.nn.functional.dropout(x, p=P_PERCENT / 100, training=True),
        baseline_name="torch.nn.functional.dropout",
        dtypes=HALF,
    ),
)
