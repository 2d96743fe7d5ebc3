"""Puzzle 27's battery (docs/dropout-statistics.md): each test's false-fail bound holds, the bounds add
up to at most 1e-6 over the puzzle, and each of issue 46's six wrong classes fails it with power 1
(the statistic that decides is the same for every draw of the class, and outside its bounds).

Masks are simulated here, as coins, and judged by the puzzle's own judge on the reruns it asks for;
the corpus (tests/wrong_kernels/puzzle27_*, tests/hostile/puzzle27_*) grades real kernels.
``python tests/test_dropout_statistics.py`` prints the figures the document gives."""
from __future__ import annotations

import sys
import zlib
from dataclasses import replace

import pytest
import torch

from conftest import COURSE
from grader.course.puzzle_parts import Run
from grader.judge import properties, randomness

PUZZLE = COURSE.puzzle("puzzle27")
CHECK = PUZZLE.check
MODULE = sys.modules[PUZZLE.spec.__module__]
BATTERY = {c.name: c for c in PUZZLE.cases if MODULE._tier({**c.sizes, **c.blocks})}


def _values(case, low=True):
    """A case's values, at the low end of every range it may draw (the power is stated there)."""
    sizes = {**case.sizes, **({k: r[0] for k, r in case.vary.items() if k != "SEED"} if low else {})}
    return {**sizes, **case.blocks}


def _coins(key, shape, q=0.5):
    return torch.rand(shape, generator=torch.Generator().manual_seed(zlib.crc32(repr(key).encode()))) < q


# Each class: kept(seed, x, shape, draw) for a kernel of it; `draw` stands for its generator's randomness.
def _correct(seed, x, shape, draw):
    return _coins((draw, seed), shape)


def _seed_mod_2(seed, x, shape, draw):
    return _coins((draw, seed % 2), shape)


def _counter_wraps_4096(seed, x, shape, draw):
    return _coins((draw, seed), (4096,)).repeat(-(-shape[0] * shape[1] // 4096))[:shape[0] * shape[1]].reshape(shape)


def _rows_two_apart(seed, x, shape, draw):
    return _coins((draw, seed), (2, shape[1]))[torch.arange(shape[0]) % 2]


def _columns_ignore_seed(seed, x, shape, draw):
    fixed = torch.arange(shape[1]) % 16 == 0
    return torch.where(fixed, _coins((draw, 0), shape), _coins((draw, seed), shape))


def _seed_ignored_past_32_rows(seed, x, shape, draw):
    fixed = (torch.arange(shape[0]) >= 32)[:, None]
    return torch.where(fixed, _coins((draw, 0), shape), _coins((draw, seed), shape))


def _mask_from_x_bits(seed, x, shape, draw):
    return _coins((draw, seed, float(x.sum())), shape)


CLASSES = {  # the six of issue 46: the case that fails each first, and its words
    "seed enters as SEED % 2": (_seed_mod_2, "many_seeds", "the two seeds give one mask"),
    "counter wraps every 4096 elements": (_counter_wraps_4096, "many_seeds", "rows 16 apart (4096 elements"),
    "rows two apart share a mask": (_rows_two_apart, "many_seeds", "rows 2 apart"),
    "1/16 of the columns ignore the seed": (_columns_ignore_seed, "many_seeds", "column 0 ignores SEED"),
    "the seed ignored past 32 rows": (_seed_ignored_past_32_rows, "many_seeds", "row 32 ignores SEED"),
    "the mask depends on x's bits": (_mask_from_x_bits, "many_seeds", "run on another x with the same SEED"),
}


def _runs(kept, values, draw=0):
    """The case's run and the reruns its check asks for, of a kernel keeping ``kept(seed, x, shape, draw)``."""
    shape, p = (values["N0"], values["T"]), values["P_PERCENT"] / 100
    x = torch.randn(shape, generator=torch.Generator().manual_seed(draw))
    runs = []
    for overrides in ({}, *CHECK.reruns(values)):
        again = {**values, **{k: v for k, v in overrides.items() if k in values}}
        x_now = torch.randn(shape, generator=torch.Generator().manual_seed(draw + 10**6)) \
            if properties.INPUTS in overrides else x
        mask = kept(again["SEED"], x_now, shape, draw)
        runs.append(Run(again, (x_now,), (torch.where(mask, x_now / (1 - p), 0.0),)))
    return tuple(runs)


@pytest.fixture(autouse=True)
def _one_thread():
    """Torch on one thread, as the grader judges: thousands of small operations on a loaded machine."""
    with properties._one_thread():
        yield


# ---- the bounds ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n, pi, alpha, upper_only", [
    (10240, (0.5, 0.5), 1e-10, False), (100, (0.25, 0.25), 1e-6, False), (40, (0.5 - 2**-20, 0.5 + 2**-20), 1e-9, False),
    (1000, (0.0, 0.25), 1e-9, True), (1, (0.0, 2 ** -39), 1e-11, True), (3, (0.7, 0.7), 1e-3, False)])
def test_the_bounds_hold_for_the_exact_binomial(n, pi, alpha, upper_only):
    """A correct kernel's count leaves the bounds with probability at most alpha (Chernoff's bound is
    above the exact tail, at the ends of the interval of keep probabilities)."""
    from scipy.stats import binom
    (lo,), (hi,) = (b.tolist() for b in randomness.bounds(torch.tensor([n]), pi, alpha, upper_only))
    outside = max(binom.cdf(lo - 1, n, pi[0]) + binom.sf(hi, n, pi[0]), binom.cdf(lo - 1, n, pi[1]) + binom.sf(hi, n, pi[1]))
    assert outside <= alpha
    k = torch.arange(n + 1)
    fails = randomness.failing(k, torch.full_like(k, n), pi, alpha, upper_only)
    assert fails.tolist() == ((k < lo) | (k > hi)).tolist()  # the count's own bound, the same test


def test_the_lag_counts_are_the_pairs_at_each_lag():
    mask = _coins("lags", (6, 9))
    signs, counted = torch.where(mask, 1.0, -1.0), torch.ones_like(mask)
    for dim, shift in ((0, lambda d: (mask[d:], mask[:-d])), (1, lambda d: (mask[:, d:], mask[:, :-d]))):
        alike, pairs = randomness.lag_counts(signs, counted, dim)
        for d in range(1, mask.shape[dim]):
            a, b = shift(d)
            assert (int(alike[d - 1]), int(pairs[d - 1])) == (int((a == b).sum()), a.numel())


def test_the_false_fail_bounds_add_up_to_one_in_a_million():
    shares = [MODULE._alpha({**c.sizes, **c.blocks}) for c in PUZZLE.cases]
    assert sum(shares) <= MODULE.FALSE_FAIL == 1e-6
    assert set(BATTERY) == {"many_seeds", "past_64_rows"}


def test_an_element_the_same_under_every_seed_is_a_test_that_can_fail():
    """40 seeds: an element kept or dropped by all of them is outside the element's bounds, for a correct
    kernel a 2^-39 event, which the case's share of 1e-6 can afford over its 10240 elements."""
    values = _values(BATTERY["many_seeds"])
    alpha = MODULE._alpha(values) / 4
    per = alpha / (values["N0"] * values["T"] + values["N0"] + values["T"] + values["N0"] * values["T"] // values["B1"])
    assert randomness.constant(0.5, MODULE.MANY_SEEDS)[1] <= per


# ---- a correct kernel passes; each wrong class fails ------------------------------------------
@pytest.mark.parametrize("case", sorted(BATTERY))
def test_correct_coins_pass_the_battery(case):
    for draw in range(2):
        assert CHECK.judge(_runs(_correct, _values(BATTERY[case]), draw)) is None


@pytest.mark.parametrize("name", list(CLASSES))
def test_each_wrong_class_fails_the_battery_with_its_words(name):
    kept, case, says = CLASSES[name]
    for draw in range(2):
        said = CHECK.judge(_runs(kept, _values(BATTERY[case]), draw))
        assert said is not None and says in said, said
        assert "yours" in said and "expected" in said


def _seed_ignored_past_64_rows(seed, x, shape, draw):
    fixed = (torch.arange(shape[0]) >= 64)[:, None]
    return torch.where(fixed, _coins((draw, 0), shape), _coins((draw, seed), shape))


def test_a_keep_rate_two_points_high_fails_over_the_seeds():
    """Each run's count alone is within its bounds more often than not; the 40 seeds' together are not."""
    biased = lambda seed, x, shape, draw: _coins((draw, seed), shape, q=0.52)
    said = CHECK.judge(_runs(biased, _values(BATTERY["many_seeds"])))
    assert said is not None and "over 40 seeds" in said and "expected a fraction 1 - p = 50%" in said, said


def test_a_mask_past_64_rows_is_judged_on_the_large_case():
    values = _values(BATTERY["past_64_rows"])
    assert "row 64 ignores SEED" in CHECK.judge(_runs(_seed_ignored_past_64_rows, values))
    assert CHECK.judge(_runs(_correct, values)) is None


def test_another_x_is_drawn_from_the_next_seed():
    case = PUZZLE.cases[0]
    assert properties.rerun_case(case, {properties.INPUTS: 1}) == replace(case, seed=case.seed + 1)
    assert properties.rerun_case(case, {"SEED": 5}).seed == case.seed


def test_notes_name_a_stream_and_never_call_a_kernel_correct():
    for look in CHECK.notes:
        assert "correct" not in f"{look.name} {look.where}".lower(), look


# ---- the figures of docs/dropout-statistics.md -------------------------------------------------
def figures() -> list[str]:
    """Each battery case's families: how many statistics each tests, its share of the case's false-fail
    bound, the bounds of a typical statistic; and the power against each class."""
    lines = []
    for name, case in BATTERY.items():
        values = _values(case)
        runs = _runs(_correct, values)
        seeds = sorted({r.values["SEED"] for r in runs if torch.equal(r.inputs[0], runs[0].inputs[0])},
                       key=[r.values["SEED"] for r in runs].index)
        masks = torch.stack([r.outputs[0] != 0 for r in runs if r.values["SEED"] in seeds][:len(seeds)])
        families = MODULE._families(masks, torch.ones(masks.shape[1:], dtype=torch.bool), 0.5, values["B1"])
        alpha = MODULE._alpha(values) / 4
        lines.append(f"{name}: {values}, seeds {seeds}, case alpha {MODULE._alpha(values):.2g}")
        for group, share in zip(families, (alpha, alpha, alpha, alpha / randomness.lag_factor(masks[0].numel()))):
            total = sum(f.size for f in group)
            tested = sum(int(randomness.testable(f.n.reshape(-1), f.pi, share / total, f.upper_only).sum())
                         for f in group)
            for f in group:
                n = f.n.reshape(-1)
                largest = int(n.max())
                lo, hi = (int(b) for b in randomness.bounds(torch.tensor([largest]), f.pi, share / max(tested, 1),
                                                            f.upper_only))
                lines.append(f"  {f.what:18s} {f.size:6d} statistics, n up to {largest:6d}: bounds {lo}..{hi}, "
                             f"family alpha {share:.3g}, each {share / max(tested, 1):.3g} ({tested} of {total} can fail)")
    return lines


if __name__ == "__main__":
    print("\n".join(figures()))
    for name, (kept, case, says) in CLASSES.items():
        failed = sum(says in (CHECK.judge(_runs(kept, _values(BATTERY[case]), draw)) or "") for draw in range(100))
        print(f"{name}: {failed}/100 simulated kernels fail {case} with {says!r}")
    passed = sum(CHECK.judge(_runs(_correct, _values(BATTERY[c]), draw)) is None for c in BATTERY for draw in range(100))
    print(f"correct: {passed}/200 simulated kernels pass")
    print(f"lag factor at 105600 bits: {randomness.lag_factor(105600):.4f}")
