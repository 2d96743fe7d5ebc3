"""Large cases run a sample of their launch's programs (grader.sandbox.sampling), compared
only where those programs stored, when the sample stands for the launch (grader.judge.sampled);
and the GPU's launch limits hold in the interpreter."""
from __future__ import annotations

from dataclasses import replace

import msgspec

import pytest
import torch

from conftest import COURSE, WRONG

from grader.channel import wire
from grader.channel.kinds import function as function_wire
from grader.judge import failures
from grader.judge.compare import compare
from grader.judge.fence import Buffer, pack
from grader.judge.sampled import Stands, stands
from grader.sandbox.sampling import LaunchRefused, StoreRecorder, check_launch, chosen, planned


# ---- which programs run ------------------------------------------------------------------
def test_a_long_axis_runs_its_first_two_its_last_and_two_drawn():
    picked = chosen(1000, seed=7)
    assert {0, 1, 999} <= set(picked) and len(picked) == 5
    assert picked == chosen(1000, seed=7)  # the same everywhere for the same seed


def test_the_drawn_programs_come_from_the_seed_and_the_axis():
    draws = {tuple(chosen(100_000, seed)) for seed in range(20)}
    assert len(draws) > 15  # a secret changes them: a kernel cannot be fitted to them
    assert chosen(100_000, 3, axis=0) != chosen(100_000, 3, axis=1)


def test_a_batchs_secret_draws_other_programs():
    """The sample's seed is the case's, with the batch's secret (grader.judge.plan.case_seed)."""
    from grader.judge.plan import case_seed
    puzzle = COURSE.puzzle("puzzle20")
    case = next(c for c in puzzle.cases if c.name == "rows_past_65535")
    seeds = {case_seed(puzzle, case, secret) for secret in range(8)}
    assert len(seeds) == 8
    assert len({tuple(chosen(65600, seed)) for seed in seeds}) == 8


def test_a_short_axis_runs_whole():
    assert chosen(5, seed=1) == [0, 1, 2, 3, 4]
    assert planned((40, 3, 1), seed=0) == 5 * 3
    assert planned((40, 6, 1), seed=0) == 5 * 4  # one drawn along axis 1


def test_the_recorder_keeps_runs_of_offsets():
    record = StoreRecorder()
    record(3, 1, torch.arange(8, 16).numpy())
    record(3, 1, torch.tensor([20, 21]).numpy())
    assert record.writes(lambda p: (p, 0, 0)) == [{"program": [3, 0, 0], "buffer": 1, "count": 10,
                                                    "runs": [8, 8, 20, 2]}]


# ---- whether a sample stands for its launch ----------------------------------------------
X = Buffer.plan("x", "input", "float32", (6, 8), 0)
Z = Buffer.plan("z", "output", "float32", (6, 8), 1)


def _run(rows: dict[int, range], programs: int = 6, buffer: Buffer = Z) -> wire.SampledRun:
    """Programs that each stored one row of ``buffer``: row -> columns."""
    writes = []
    for row, cols in rows.items():
        offsets = [row * buffer.strides[0] + c * buffer.strides[1] for c in cols]
        runs = [v for o in sorted(offsets) for v in (o, 1)]
        writes.append(wire.ProgramWrites(program=(row, 0, 0), buffer=1, count=len(offsets), runs=tuple(runs)))
    return wire.SampledRun(programs=programs, ran=len(rows), writes=tuple(writes))


def test_one_row_per_program_stands_and_the_mask_is_those_rows():
    judged = stands((X, Z), 1, _run({0: range(8), 1: range(8), 5: range(8)}))
    assert isinstance(judged, Stands)
    assert judged.masks["z"].sum() == 24 and judged.masks["z"][[0, 1, 5]].all()


def test_a_row_stored_in_part_does_not_stand():
    """A block capped below the row: the programs that did not run could not owe the rest."""
    assert "2 cells of [1, 4] for 6 programs" in stands((X, Z), 1, _run({0: range(4), 5: range(4)}))


def test_a_program_storing_two_boxes_does_not_stand():
    assert "more than one box" in stands((X, Z), 1, _run({0: [0, 1, 6, 7], 5: range(8)}))


def test_two_programs_on_one_cell_do_not_stand():
    run = _run({0: range(8), 5: range(8)})
    twice = msgspec.structs.replace(run, writes=(run.writes[0], msgspec.structs.replace(run.writes[0],
                                                                                         program=(5, 0, 0))))
    assert stands((X, Z), 1, twice) == "`z`: two programs stored the same cell"


def test_a_program_that_stored_nothing_does_not_stand():
    run = _run({0: range(8), 5: range(8)})
    assert "not every program that ran" in stands((X, Z), 1, msgspec.structs.replace(run, ran=3))


def test_a_transposed_output_is_read_by_its_strides():
    zt = Buffer.plan("z", "output", "float32", (6, 8), 1, "transposed")
    judged = stands((X, zt), 1, _run({2: range(8), 4: range(8)}, buffer=zt))
    assert isinstance(judged, Stands) and judged.masks["z"][[2, 4]].all() and judged.masks["z"].sum() == 16


def test_only_the_sampled_elements_are_compared():
    x = torch.randn(6, 8)
    want = x + 1
    got = want.clone()
    got[3] = float("nan")  # a row no program that ran stored: the grader's fill
    raw = [pack(X, x), pack(Z, got)]
    mask = torch.zeros(6, 8, dtype=torch.bool)
    mask[[0, 5]] = True
    assert compare((X, Z), raw, [x], [want], lambda d: (1e-5, 1e-5), sampled={"z": mask}).passed
    got[0, 2] = 7.0
    outcome = compare((X, Z), [pack(X, x), pack(Z, got)], [x], [want], lambda d: (1e-5, 1e-5), sampled={"z": mask})
    assert outcome.kind == "mismatch" and "(0, 2)" in outcome.message


def test_a_read_of_another_programs_part_is_a_race_that_says_so():
    text = failures.word(failures.ReadAcross("z", (1, 0, 0), 0, (40000,), True, 5, 40, 22, "y = tl.load(z_ptr)"))
    assert text.startswith("a race: program (1, 0, 0) loaded z(0) at line 22: `y = tl.load(z_ptr)`")
    assert "runs 5 of the launch's 40 programs, so the element held another program's value" in text


# ---- which puzzles sample ----------------------------------------------------------------
def test_puzzles_whose_programs_depend_on_each_other_run_whole():
    assert COURSE.puzzle("puzzle02").samples
    assert not COURSE.puzzle("puzzle26").samples  # a histogram: atomics into a zeroed output
    assert not COURSE.puzzle("puzzle21").samples  # partial sums reduced on the host
    assert not COURSE.puzzle("puzzle22").samples  # an autograd function: its backward reads the forward's
    assert not replace(COURSE.puzzle("puzzle02"), dependent=True).samples


# ---- the GPU's launch limits -------------------------------------------------------------
@pytest.mark.parametrize("grid, says", [
    ((4, 65536, 1), "has 65536 programs on axis 1, and a GPU allows at most 65535 on axis 1"),
    ((1, 1, 70000), "70000 programs on axis 2"),
    ((2**31, 1, 1), "at most 2147483647 on axis 0"),
])
def test_a_grid_a_gpu_refuses_is_refused(grid, says):
    with pytest.raises(LaunchRefused, match=says):
        check_launch(grid)


def test_rows_on_axis_0_past_65535_are_fine():
    check_launch((1 << 20, 65535, 65535))


@pytest.mark.parametrize("warps, says", [(64, "num_warps=64"), (3, "a power of two"), (0, "num_warps=0")])
def test_num_warps_a_gpu_cannot_run_is_refused(warps, says):
    with pytest.raises(LaunchRefused, match=says):
        check_launch((), warps)


# ---- end to end --------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name, kind, says", [
    ("puzzle02_reads_neighbours_block.py", "race", "it had not stored itself"),
    ("puzzle02_part_of_each_block_when_large.py", "unwritten", "were never written"),
])
def test_a_large_case_under_sampling_catches_what_the_whole_launch_would(name, kind, says):
    """A program reading its neighbour's block fails from the sample itself; one storing part of
    its block makes the sample not stand, and the whole launch finds the elements unwritten."""
    from grader.judge.options import Options
    from grader.judge.session import grade_many
    result = grade_many(COURSE, [("puzzle02", WRONG / name)], Options(timeout=30, compile_check=False)).results[0]
    failing = [c for c in result.cases if not c.passed]
    assert [c.name for c in failing] == ["past_16_bit_offsets"]
    assert failing[0].kind == kind and says in failing[0].message


@pytest.mark.slow
def test_a_large_case_whose_sample_does_not_stand_is_not_run_whole_once_a_case_failed():
    """rstd never stored: the small cases fail at once, and the large cases' samples do not stand
    (programs that stored nothing to rstd); their tens of thousands of programs are not run whole
    for a puzzle that already fails, and the case says why."""
    from grader.judge.options import Options
    from grader.judge.session import grade_many
    result = grade_many(COURSE, [("puzzle20", WRONG / "puzzle20_rstd_not_saved.py")],
                        Options(timeout=20, compile_check=False)).results[0]
    cases = {c.name: c for c in result.cases}
    assert cases["classic"].kind == "unwritten" and "`rstd`" in result.message
    rows = cases["rows_past_65535"]
    assert rows.kind == "skipped" and rows.seconds == 0.0
    assert ("not run: its sample does not stand for its launch (not every program that ran stored to `rstd`), "
            "so all 65600 of its programs would run in the interpreter, and case classic[seed=0] already "
            "failed: fix that one first") in rows.message


def test_a_recorded_launch_a_gpu_refuses_names_the_line_and_the_limit():
    from grader.judge.kinds.function.check import refused_launch
    step = function_wire.Step(phase="forward", args=(), kwargs={"num_warps": 4}, line=79, source="k[(1, n)](x)",
                     kernel=function_wire.KernelPath(path=("rms_norm_fwd",)), grids=((1, 65600),))
    from types import SimpleNamespace
    text = failures.word(refused_launch(SimpleNamespace(launches=lambda: [step])))
    assert text.startswith("your forward's launch of `rms_norm_fwd` at line 79: `k[(1, n)](x)` is refused on a GPU")
    assert "(1, 65600) has 65600 programs on axis 1, and a GPU allows at most 65535" in text
    fine = msgspec.structs.replace(step, grids=((65600, 1),))
    assert refused_launch(SimpleNamespace(launches=lambda: [fine])) is None


def test_a_case_recorded_but_not_run_says_so_in_the_report():
    from grader.judge.kinds.function.check import NOT_INTERPRETED
    from grader.judge.results import CaseResult, PuzzleResult, Status
    from grader.report.text import render_puzzle
    cases = [CaseResult("classic", {}, {}, 0, (), True),
             CaseResult("rows_past_65535", {}, {}, 11, (), True, message=NOT_INTERPRETED)]
    text = render_puzzle(PuzzleResult("puzzle22", "RMS norm", Status.PASS, "f.py", "cpu", cases=tuple(cases)))
    assert "rows_past_65535[seed=11]: recorded, its launches checked against a GPU's limits; not run" in text
