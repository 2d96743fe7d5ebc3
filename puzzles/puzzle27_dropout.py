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
elements are $x/(1-p)$ (to the output's rounding) and the dropped ones 0. Run again, or with `B1`
halved, the kernel writes the same `z` (a function of the element, not of the program); run on
another `x` with the same `SEED`, as the backward runs on the upstream gradient, it keeps the same
positions; run with other seeds, it drops other elements. Two cases at $p = 1/2$ then treat the
masks as coins: 40 seeds on 40 rows of 256, and 4 seeds on 80 rows or more of 1000 or more. Over the
seeds each element, row, column and block is kept at the rate $1 - p$ and changes with the seed; two
seeds' masks agree as often as two independent coins; and elements any number of rows, columns or
places apart are kept independently of each other. Each test's bounds are wide enough that a
correct dropout fails the whole puzzle less than once in a million gradings
(`docs/dropout-statistics.md` gives each test's bound, and its power against wrong dropouts).

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

**Sizes.** One case has 33 rows of 1000 (offsets past 16 bits), another 80 rows or more of 1000
or more (past $2^{16}$ elements), and a batch draws its sizes and seeds within a range, so fit
nothing to the sizes or seeds you see.
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

# Streams other than the statement's, named beside a pass: a note says which stream the output matches on
# the small cases, never that the kernel is right (the battery's cases judge that).
NOTES = (
    LookAlike("one Philox draw per element, its first word (`tl.rand(SEED, i * T + j)`)", _one_draw_per_element,
              "four times as many draws as needed: `tl.rand4x(SEED, i * cdiv(T, 4) + j // 4)` gives four "
              "columns their words at once", faster=True),
    LookAlike("word j % 4 of draw i * T + j (the counter not divided by 4)", _counter_not_divided,
              "four times as many draws as needed: four columns can share a draw, `i * cdiv(T, 4) + j // 4`",
              faster=True),
    LookAlike("rows T // 4 draws apart, not cdiv(T, 4) (a row's last draw shared with the next)", _rows_overlap,
              "where T is not a multiple of 4, a row's last columns and the next row's first take the same "
              "words, so their masks are equal: start row `i`'s draws at `i * tl.cdiv(T, 4)`"),
)

# ---- graded by properties: every correct dropout passes, whichever stream it draws ----------------
# Each case's runs are judged by binomial tests whose false-fail bounds add up to FALSE_FAIL over the
# whole puzzle (grader/judge/randomness.py; docs/dropout-statistics.md gives each test's bound and power).
FALSE_FAIL = 1e-6
BATTERY_SHARE = 0.4  # of FALSE_FAIL, for each of the two battery cases; the other cases share the rest
MANY_SEEDS = 40  # seeds of the element battery: an element the same under all 40 is a 2^-39 event
FEW_SEEDS = 4  # seeds of the large battery, whose rows (of 1000) and columns (of 80) need few
TOLERANCES = {"float32": (1e-6, 1e-6), "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}


def _tier(values):
    """Which battery a case's runs take: "seeds" (40 seeds, p = 1/2), "large" (4 seeds on more than
    2^16 elements, p = 1/2), or None (another seed, another block, another x)."""
    if values["P_PERCENT"] != 50 or values["N0"] * values["T"] < 8192:
        return None
    return "large" if values["N0"] * values["T"] > 2**16 else "seeds"


def _seeds(seed, count):
    """``count`` seeds other than ``seed``: first those that share most of its bits or residues, which a
    kernel reading only part of the seed maps to one mask (its low 30 bits; all but bit 0; its residue
    mod every m <= 16; its low 16 bits), then spread ones (a fixed hash of ``seed`` and ``k``)."""
    near = (seed ^ 2**30, seed ^ 1, seed + 720720 if seed + 720720 < 2**31 else seed - 720720, seed ^ 2**16)
    spread = (((seed + k) * 0x9E3779B1 ^ (k * 0x85EBCA77)) % 2**31 for k in range(1, 4 * count))
    chosen = []
    for s in (*near, *spread):
        if s != seed and s not in chosen:
            chosen.append(s)
    return tuple(chosen[:count])


def _dropout_reruns(values):
    """Small cases: the same again, B1 halved (or doubled from 4), another x, another seed. The battery
    cases: 39 other seeds (and the first three), or 3 other seeds and another x on the large one."""
    # The override that draws x again: the grader's name, imported where it runs (workers load this file too).
    from grader.judge.properties import INPUTS
    seed, x_again = values["SEED"], {INPUTS: 1}
    if _tier(values) == "large":
        return (x_again, *({"SEED": s} for s in _seeds(seed, FEW_SEEDS - 1)))
    block = values["B1"] // 2 if values["B1"] >= 8 else values["B1"] * 2
    first = ({}, {"B1": block}, x_again)
    if _tier(values) == "seeds":
        return (*first, *({"SEED": s} for s in _seeds(seed, MANY_SEEDS - 1)))
    return (*first, {"SEED": (seed + 1_000_003) % 2**31})


def _dropout_expect(run):
    """What the run should have written given its own mask: x / (1 - p) where it wrote anything
    but 0, 0 elsewhere (a kept element of x == 0 reads as dropped, which changes nothing)."""
    (x,), (z,) = run.inputs, run.outputs
    p = torch.tensor(run.values["P_PERCENT"], dtype=torch.float32) / 100
    return (torch.where(z != 0, x.float() / (1 - p), 0.0).to(x.dtype),)


def _alpha(values):
    """This case's share of FALSE_FAIL."""
    small = sum(_tier({**c.sizes, **c.blocks}) is None for c in CASES)
    return BATTERY_SHARE * FALSE_FAIL if _tier(values) else (1 - 2 * BATTERY_SHARE) * FALSE_FAIL / small


def _scaled_wrong(run, said):
    """Where the run kept an element but did not write x / (1 - p): worded, or None."""
    (x,), (z,) = run.inputs, run.outputs
    (want,) = _dropout_expect(run)
    atol, rtol = TOLERANCES[str(z.dtype).removeprefix("torch.")]
    bad = ((z.float() - want.float()).abs() > atol + rtol * want.float().abs()).nonzero()
    if not len(bad):
        return None
    i, j = bad[0].tolist()
    return (f"{said}, yours wrote z[{i}, {j}] = {float(z[i, j]):.6g} where it kept x[{i}, {j}] = {float(x[i, j]):.6g}, "
            f"expected x / (1 - p) = {float(want[i, j]):.6g}. Divide every survivor by 1 - p.")


def _told(values, first):
    changed = {k: v for k, v in values.items() if first.get(k) != v}
    return changed, ", ".join(f"{k}={v}" for k, v in changed.items())


def _same_seed(first, run):
    """A rerun with the first run's seed: the same z from the same x (another block size, or again),
    the same kept elements from another x (the backward's grad_output). Worded, or None."""
    changed, told = _told(run.values, first.values)
    (x,), (z,), (x2,), (z2,) = first.inputs, first.outputs, run.inputs, run.outputs
    if not torch.equal(x, x2):
        both = (x != 0) & (x2 != 0)
        moved = int(((z != 0) != (z2 != 0))[both].sum())
        if not moved:
            return None
        return (f"run on another x with the same SEED={first.values['SEED']} (as the backward runs on grad_output), "
                f"yours keeps other elements: {moved} of {int(both.sum())} kept in one run and dropped in the other, "
                f"expected the same mask: it must be a function of the seed and the element's position only, not of "
                f"x's values, so that the backward drops exactly what the forward dropped. Draw `u` from `SEED` "
                f"and the element's counter alone.")
    if torch.equal(z.view(torch.uint8), z2.view(torch.uint8)):
        return None
    moved = int(((z != 0) != (z2 != 0)).sum())
    how = f"with {told} instead of " + ", ".join(f"{k}={first.values[k]}" for k in changed) if changed \
        else "run again with the same values"
    return (f"{how}, yours wrote another z ({moved} elements kept in one run and dropped in the other), "
            f"expected the same: the mask must be a function of the seed and the element alone, not of "
            f"the program that draws it, its block or the run, so that the backward redraws it.")


def _families(masks, counted, q, block):
    """The battery's statistics on ``masks`` (seeds x rows x columns, the same x), in the order their
    failures are worded where two are as extreme: elements the same for every seed, pairs of seeds,
    keep rates, lags."""
    from grader.judge import randomness as rnd  # the grader's, imported where it runs (workers load this file)
    s, rows, cols = masks.shape
    kept = masks & counted
    n_all = counted.sum()
    blocks = -(-cols // block)

    def by_block(a):  # rows x blocks sums of a rows x columns tensor
        padded = torch.nn.functional.pad(a.long(), (0, blocks * block - cols))
        return padded.reshape(rows, blocks, block).sum(-1)

    rates = [rnd.Family("rate run", kept.sum((1, 2)), n_all.expand(s), rnd.keep(q)),
             rnd.Family("rate row", kept.sum(2), counted.sum(1).expand(s, rows), rnd.keep(q))]
    constant, pairs = [], []
    if s > 1:
        runs = kept.sum(0)
        rates += [rnd.Family("rate seeds", kept.sum().reshape(1), (s * n_all).reshape(1), rnd.keep(q)),
                  rnd.Family("rate column", runs.sum(0), s * counted.sum(0), rnd.keep(q)),
                  rnd.Family("rate block", by_block(runs), s * by_block(counted), rnd.keep(q)),
                  rnd.Family("rate element", runs, s * counted.long(), rnd.keep(q))]
        same = (masks == masks[:1]).all(0) & counted
        each = rnd.constant(q, s)
        constant = [rnd.Family("constant row", same.sum(1), counted.sum(1), each, upper_only=True),
                    rnd.Family("constant column", same.sum(0), counted.sum(0), each, upper_only=True),
                    rnd.Family("constant block", by_block(same), by_block(counted), each, upper_only=True),
                    rnd.Family("constant element", same.long(), counted.long(), each, upper_only=True)]
        a, b = torch.triu_indices(s, s, 1)
        alike = ((masks[a] == masks[b]) & counted).sum((1, 2))
        pairs = [rnd.Family("seeds", alike, n_all.expand(len(alike)), rnd.agree(q))]
    first = masks[0]
    if q == 0.5:  # fair coins: every lag, each a binomial of all its pairs
        signs = torch.where(counted, torch.where(first, 1.0, -1.0), 0.0)
        lags = [rnd.Family(f"lag {what}", *rnd.lag_counts(signs if dim >= 0 else signs.flatten(),
                                                          counted if dim >= 0 else counted.flatten(), max(dim, 0)),
                           (0.5, 0.5)) for what, dim in (("row", 0), ("column", 1), ("flat", -1))]
    else:  # neighbours in pairs that share no element: independent agreements at any q
        lags = []
        for what, a, b, both in (("column", first[:, 0:-1:2], first[:, 1::2], counted[:, 0:-1:2] & counted[:, 1::2]),
                                 ("row", first[0:-1:2], first[1::2], counted[0:-1:2] & counted[1::2])):
            lags.append(rnd.Family(f"lag {what}", ((a == b) & both).sum().reshape(1), both.sum().reshape(1),
                                   rnd.agree(q)))
    return constant, pairs, rates, lags


def _worded(f, q, values, seeds, pair_of):
    """A battery finding in words: what was yours, what a correct dropout gives, and the fix."""
    rows, cols, block = values["N0"], values["T"], values["B1"]
    s = len(seeds)
    over = f"over {s} seeds (SEED={', '.join(map(str, seeds[:3]))}{', ...' if s > 3 else ''})"
    once = f"less than once in 10^{math.floor(math.log10(1 / f.alpha))}"
    bounds = f"a correct dropout: between {f.lo} and {f.hi}, outside them {once}"
    kind, group = f.what.split(" ", 1) if " " in f.what else (f.what, "")
    fair = "Keep where `u > p`, with `u` uniform in [0, 1) and drawn for each element from `SEED` and its counter."
    counters = ("Give each element a counter of its own that no other element shares: the flat index `i * T + j` "
                "(in int32, with no modulo or narrower type), or `i * cdiv(T, 4) + j // 4` with word `j % 4`.")
    if kind == "rate":
        where = {"run": lambda: f"with SEED={seeds[f.index[0]]}, yours keeps",
                 "row": lambda: f"with SEED={seeds[f.index[0]]}, in row {f.index[1]}, yours keeps",
                 "seeds": lambda: f"{over}, yours keeps",
                 "column": lambda: f"{over}, in column {f.index[0]}, yours keeps",
                 "block": lambda: f"{over}, in row {f.index[0]}'s columns {f.index[1] * block} to "
                                  f"{min(cols, f.index[1] * block + block) - 1}, yours keeps",
                 "element": lambda: f"{over}, of element ({f.index[0]}, {f.index[1]}), yours keeps"}[group]()
        return (f"{where} {f.k} of {f.n} ({100 * f.fraction:.1f}%), expected a fraction 1 - p = {100 * q:.0f}% "
                f"of them ({bounds}). {fair}")
    if kind == "seeds":
        a, b = pair_of(f.index[0])
        same = "one mask" if f.k == f.n else "the inverse masks" if f.k == 0 else \
            "related masks: part of the tensor ignores SEED, or SEED enters only in part"
        return (f"with SEED={seeds[a]} and SEED={seeds[b]}, yours keeps or drops {f.k} of the {f.n} elements alike, "
                f"expected about {f.n * (q * q + (1 - q) ** 2):.0f}, as two independent coins would ({bounds}): "
                f"the two seeds give {same}. Pass `SEED` itself to the generator for every "
                f"element: a function of part of it (`SEED % 2`, its low or high bits) gives different seeds one "
                f"mask.")
    if kind == "constant":
        what = {"row": lambda: f"row {f.index[0]}", "column": lambda: f"column {f.index[0]}",
                "block": lambda: f"row {f.index[0]}'s columns {f.index[1] * block} to "
                                 f"{min(cols, f.index[1] * block + block) - 1}",
                "element": lambda: f"element ({f.index[0]}, {f.index[1]})"}[group]()
        return (f"{over}, yours keeps {f.k} of the {f.n} elements of {what} the same for every seed, expected at "
                f"most {f.hi} (a correct dropout keeps more the same {once}): {what} "
                f"{'ignores' if f.k == f.n else 'ignores in part'} SEED. Draw every element's number from `SEED` "
                f"and its counter, with no branch that leaves part of the tensor to a fixed seed.")
    d = f.index[0] + 1
    apart = {"row": "neighbours down the columns (row i and i + 1)" if d == 1 else f"rows {d} apart ({d * cols} "
                                                                                  f"elements in memory)",
             "column": "neighbours along the rows (element j and j + 1)" if d == 1 else f"columns {d} apart in a row",
             "flat": f"elements {d} apart in memory"}[group]
    return (f"with SEED={seeds[0]}, yours keeps {apart} alike {f.k} of {f.n} times, expected about "
            f"{f.n * (q * q + (1 - q) ** 2):.0f}, as independent coins would ({bounds}). {counters}")


def _battery(first, runs):
    """The runs of distinct seeds on the first run's x, through the battery: the most extreme failure
    worded, or None."""
    from grader.judge import randomness as rnd
    values, (x,) = first.values, first.inputs
    q = 1 - values["P_PERCENT"] / 100
    seeds, masks = [], []
    for run in (first, *runs):
        if torch.equal(run.inputs[0], x) and run.values["SEED"] not in seeds:
            seeds.append(run.values["SEED"])
            masks.append(run.outputs[0] != 0)
    counted = x != 0
    constant, pairs, rates, lags = _families(torch.stack(masks), counted, q, values["B1"])
    alpha = _alpha(values) / 4  # each of the four families' share
    fair_bits = rnd.lag_factor(int(counted.sum())) if q == 0.5 else 1.0
    findings = [f for families, share in ((constant, alpha), (pairs, alpha), (rates, alpha), (lags, alpha / fair_bits))
                for f in rnd.judge(families, share)]
    if not findings:
        return None
    a, b = torch.triu_indices(len(seeds), len(seeds), 1)
    # The most extreme, and of those the largest group (a row ignoring SEED, not its elements one by one); a lag
    # in memory only where no lag in rows or columns is as extreme. Of equals, max keeps the first.
    worst = max(findings, key=lambda f: (f.extremeness, 0 if f.what == "lag flat" else f.n))
    return _worded(worst, q, values, seeds, lambda i: (int(a[i]), int(b[i])))


def _dropout_judge(runs):
    first = runs[0]
    for run in runs[1:]:
        told = _told(run.values, first.values)[1]
        said = _scaled_wrong(run, "on another x" if not torch.equal(run.inputs[0], first.inputs[0]) else
                             f"with {told}" if told else "run again")
        said = said or (_same_seed(first, run) if run.values["SEED"] == first.values["SEED"] else None)
        if said:
            return said
    return _battery(first, runs[1:])


CASES = (
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
    # The battery (docs/dropout-statistics.md), at p = 1/2, where each element of a mask is a fair coin.
    # 40 seeds on 40 rows (past 32) of 256: each element, row, column and block over the seeds, every
    # pair of seeds, and every lag up to 10239 elements (past 4096).
    Case("many_seeds", sizes={"N0": 40, "T": 256, "SEED": 1234567, "P_PERCENT": 50}, blocks={"B1": 64}, seed=8,
         vary={"SEED": (1, 2**31 - 1)}),
    # Past any row or offset a kernel could hide a repeat below: 80 rows or more (past 64) of 1000 or
    # more (past 2^16 elements), 4 seeds and another x.
    Case("past_64_rows", sizes={"N0": 80, "T": 1000, "SEED": 2718281, "P_PERCENT": 50}, blocks={"B1": 256}, seed=9,
         large=True, vary={"N0": (80, 96), "T": (1000, 1100), "SEED": (1, 2**31 - 1)}),
)

PUZZLE = Puzzle(
    id="puzzle27",
    title="Dropout with a seeded random mask",
    track="transformer",
    statement=__doc__,
    spec=spec,
    kernel="dropout_kernel",
    grid=lambda s: (s["N0"], cdiv(s["T"], s["B1"])),
    cases=CASES,
    # A survivor is x / (1 - p), which may round differently by an ulp; which survive is the kernel's choice.
    atol=TOLERANCES["float32"][0],
    rtol=TOLERANCES["float32"][1],
    tolerances={k: v for k, v in TOLERANCES.items() if k != "float32"},
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
