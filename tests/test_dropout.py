"""Puzzle 27 graded by its properties (issue 32): every correct dropout passes, whichever Philox
stream and word it draws; the wrong ones fail for what they do.

The judge (``Puzzle.check``) is exercised here on masks made in this process, in milliseconds;
the corpus (tests/wrong_kernels/puzzle27_*, tests/hostile/puzzle27_*) grades real kernels."""
from __future__ import annotations

import pytest
import torch

from conftest import COURSE, ROOT
from grader.app.selftest import declared
from grader.course.puzzle_parts import Run
from grader.judge.options import Options
from grader.judge.session import grade_many

PUZZLE = COURSE.puzzle("puzzle27")
CHECK = PUZZLE.check


def _run(kept, values=None, x=None):
    """A run whose kernel kept ``kept`` (a bool tensor) and scaled it right."""
    values = {"N0": kept.shape[0], "T": kept.shape[1], "SEED": 7, "P_PERCENT": 50, "B1": 64, **(values or {})}
    x = torch.randn(kept.shape, generator=torch.Generator().manual_seed(1)) if x is None else x
    p = torch.tensor(values["P_PERCENT"], dtype=torch.float32) / 100
    return Run(values, (x,), (torch.where(kept, x / (1 - p), 0.0),))


def _fair(shape=(32, 100), seed=0, q=0.5):
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed)) < q


def _correct_runs(shape=(32, 100)):
    first = _run(_fair(shape))
    return (first, _run(_fair(shape)), _run(_fair(shape), {"B1": 32}), _run(_fair(shape, seed=5), {"SEED": 99}))


def test_a_fair_independent_mask_redrawn_the_same_passes():
    assert CHECK.judge(_correct_runs()) is None
    small = {"N0": 32, "T": 100, "B1": 64, "SEED": 7, "P_PERCENT": 50}
    assert CHECK.reruns(small) == ({}, {"B1": 32}, {"inputs": 1}, {"SEED": 1000010})
    assert CHECK.reruns({**small, "B1": 4, "SEED": 2**31 - 1})[1:] == ({"B1": 8}, {"inputs": 1}, {"SEED": 1000002})


def test_expect_scales_the_kept_and_zeroes_the_rest_of_the_runs_own_mask():
    run = _run(_fair((4, 10)))
    (want,) = CHECK.expect(run)
    assert torch.equal(want, run.outputs[0])
    unscaled = Run(run.values, run.inputs, (torch.where(run.outputs[0] != 0, run.inputs[0], 0.0),))
    assert not torch.allclose(CHECK.expect(unscaled)[0], unscaled.outputs[0])


@pytest.mark.parametrize("runs, says", [
    ((_run(_fair(q=0.25)),), "in row 8, yours keeps 14 of 100 (14.0%), expected a fraction 1 - p = 50% of them "
                             "(a correct dropout: between 18 and 82"),  # a quarter kept: its most extreme row
    ((_run(torch.cat([_fair((16, 100), q=0.9), _fair((16, 100), 1, q=0.1)])),), "in row 18, yours keeps 5"),
    ((_run(torch.arange(100).expand(32, 100) % 2 == 0),), "yours keeps neighbours along the rows (element j and j + 1)"),
    ((_run(_fair((1, 100)).expand(32, 100)),), "yours keeps neighbours down the columns (row i and i + 1)"),
    ((_run(_fair()), _run(_fair(seed=3))), "run again with the same values, yours wrote another z"),
    ((_run(_fair()), _run(_fair(seed=3), {"B1": 32})), "with B1=32 instead of B1=64, yours wrote another z"),
    ((_run(_fair()), _run(_fair(), {"SEED": 99})), "with SEED=7 and SEED=99, yours keeps or drops 3200 of the 3200 "
                                                   "elements alike"),
    ((_run(_fair()), _run(_fair(seed=3), x=torch.randn(32, 100))), "run on another x with the same SEED=7"),
])
def test_each_property_a_wrong_dropout_breaks_is_named(runs, says):
    said = CHECK.judge(runs)
    assert said is not None and says in said, said
    assert "yours" in said and "expected" in said


@pytest.mark.slow  # 400 judgements (about 10 s on 2 loaded cores)
def test_the_keep_rate_bound_is_one_a_correct_kernel_meets():
    """50 fair masks of each case's size and p: none outside the bounds (each would be once in 10^8)."""
    for case in PUZZLE.cases:
        values = {**PUZZLE.sizes(case), **case.blocks}
        shape, q = (values["N0"], values["T"]), 1 - values["P_PERCENT"] / 100
        for seed in range(50 if not case.large else 10):
            assert CHECK.judge((_run(_fair(shape, seed, q), values),)) is None, (case.label, seed)


CORRECT = sorted((ROOT / "tests" / "hostile").glob("puzzle27_*.py"))


@pytest.mark.slow  # grades puzzle 27 four times, three runs a case
def test_correct_dropouts_of_other_streams_pass_with_a_note(tmp_path):
    assert {p.stem for p in CORRECT} >= {"puzzle27_one_draw_per_element", "puzzle27_attorch_style"}
    report = grade_many(COURSE, [("puzzle27", p) for p in CORRECT], Options(), jobs=2)
    for path, result in zip(CORRECT, report.results):
        expect = declared(path)
        assert result.status == expect["EXPECT_STATUS"] == "pass", f"{path.name}: {result.message}"
        if "EXPECT_SAYS" in expect:
            assert expect["EXPECT_SAYS"] in result.message, result.message
    statement_stream = grade_many(COURSE, [("puzzle27", COURSE.solution_file("puzzle27"))], Options()).results[0]
    assert statement_stream.status == "pass" and "Note" not in statement_stream.message


def test_bench_judges_a_timed_call_by_the_same_properties():
    """--bench compares each call with what its own mask gives, and checks its keep rate and
    independence: the statement's stream and the tutorial's both pass, an unscaled one fails."""
    from grader.judge.bench.run import check_size, plan_size
    from grader.sandbox.bench.run import raw
    planned = plan_size(PUZZLE, {"N0": 64, "T": 256, "SEED": 1234, "P_PERCENT": 10})
    (x,) = planned.inputs
    values = {**PUZZLE.bench.blocks, **planned.header["sizes"]}
    tutorial = CHECK.notes[0].produce([x], values, {})[0]
    assert check_size(PUZZLE, planned, *raw([planned.expected[0]])).passed
    assert check_size(PUZZLE, planned, *raw([tutorial])).passed and not torch.equal(tutorial, planned.expected[0])
    unscaled = torch.where(tutorial != 0, x, 0.0).to(x.dtype)
    assert not check_size(PUZZLE, planned, *raw([unscaled])).passed
    inverted = torch.where(tutorial == 0, x.float() / 0.9, 0.0).to(x.dtype)
    failed = check_size(PUZZLE, planned, *raw([inverted]))
    assert failed.kind == "mismatch" and "expected a fraction 1 - p = 90% of them" in failed.message
