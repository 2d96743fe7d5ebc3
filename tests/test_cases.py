"""Cases that reach the statement's range: ``Case.large`` (values checked without the bounds
hooks, rerun with them when wrong) and ``Case.vary`` (sizes a batch's secret draws)."""
from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest

from conftest import COURSE, PUZZLE_IDS, WRONG
from grader.course.case import Case, draw
from grader.course.puzzle import Puzzle
from grader.judge.case_run import CaseOutcome, hooks_if_failed
from grader.judge.failures import FailureKind
from grader.judge.grade import PuzzleGrader
from grader.judge.kinds import kind_of
from grader.judge.options import Options
from grader.judge.plan import SpecShapes
from grader.judge.results import CaseResult

BIG = Case("big", sizes={"N0": 40000}, blocks={"B0": 64}, large=True, vary={"N0": (33000, 50000)})


# ---- declarations ------------------------------------------------------------------------
@pytest.mark.parametrize("vary, says", [
    ({"M": (1, 9)}, "vary names 'M', which is not one of its integer sizes (N0); give the size a declared value"),
    ({"N0": (10, 20)}, "vary['N0'] = (10, 20) must hold the declared size N0=40000, with 1 <= low <= 40000 <= high"),
    ({"N0": (0, 50000)}, "with 1 <= low <= 40000 <= high"),
    ({"N0": [33000, 50000]}, "vary['N0'] must be a pair of ints (low, high), not [33000, 50000]"),
    ({"N0": (33000.0, 50000)}, "must be a pair of ints (low, high)"),
])
def test_a_bad_range_is_refused_with_the_fix(vary, says):
    with pytest.raises(ValueError) as raised:
        replace(BIG, vary=vary)
    assert says in str(raised.value)
    assert "case 'big'" in str(raised.value)


def test_a_tuple_size_cannot_vary():
    with pytest.raises(ValueError, match="vary names 'batch', which is not one of its integer sizes \\(D\\)"):
        Case("rows", sizes={"batch": (4, 5), "D": 8}, blocks={}, vary={"batch": (1, 9)})


def test_large_must_be_a_bool():
    with pytest.raises(ValueError, match="case 'big': large must be True or False, not 1"):
        replace(BIG, large=1)


def test_a_range_whose_end_breaks_the_grid_is_refused():
    bad = replace(BIG, sizes={"N0": 40}, vary={"N0": (1, 40)})
    with pytest.raises(ValueError, match="grid \\(0,\\) for case big\\[seed=0\\] is not 1 to 3 positive ints"):
        Puzzle(id="puzzle99", title="t", statement="", spec=lambda x: x, kernel="k", cases=(bad,),
               grid=lambda s: (s["N0"] // 2,))


# ---- the secret's draws ------------------------------------------------------------------
def test_without_a_secret_the_declared_sizes_are_used():
    assert draw(BIG, "puzzle02", 0) is BIG


def test_draws_are_reproducible_and_within_range():
    drawn = [draw(BIG, "puzzle02", secret).sizes["N0"] for secret in range(1, 41)]
    assert drawn == [draw(BIG, "puzzle02", secret).sizes["N0"] for secret in range(1, 41)]
    assert all(33000 <= n <= 50000 for n in drawn)
    assert len(set(drawn)) > 30  # the secret decides, not the declaration
    assert draw(BIG, "puzzle02", 7).label == BIG.label  # the case keeps its name and seed


def test_draws_differ_between_puzzles_and_cases():
    assert draw(BIG, "puzzle02", 7).sizes != draw(BIG, "puzzle04", 7).sizes
    assert draw(BIG, "puzzle02", 7).sizes != draw(replace(BIG, seed=1), "puzzle02", 7).sizes


@pytest.mark.parametrize("puzzle_id", PUZZLE_IDS)
def test_every_drawn_case_stays_in_range_and_launches(puzzle_id):
    puzzle = COURSE.puzzle(puzzle_id)
    for secret in (1, 2, 3):
        for case in puzzle.cases:
            drawn = draw(case, puzzle.id, secret)
            for name, (low, high) in case.vary.items():
                assert low <= drawn.sizes[name] <= high
            puzzle.launch_grid(drawn)


def test_the_grader_grades_and_describes_the_drawn_sizes():
    from grader.judge.case_run import describe_case
    solution, kind = COURSE.solution_file("puzzle02"), kind_of(COURSE.puzzle("puzzle02"))
    plain = PuzzleGrader(COURSE, "puzzle02", solution, worker=None, options=Options(), kind=kind)
    secret = PuzzleGrader(COURSE, "puzzle02", solution, worker=None, options=Options(secret=11), kind=kind)
    declared, drawn = (next(c for c in g.puzzle.cases if c.large) for g in (plain, secret))
    assert declared.sizes["N0"] == 40000 and drawn.sizes["N0"] == draw(declared, "puzzle02", 11).sizes["N0"] != 40000
    assert describe_case(drawn, secret.puzzle) == f"case past_16_bit_offsets[seed=8] (N0={drawn.sizes['N0']}, B0=1024)"
    assert [c for c in secret.puzzle.cases if not c.vary] == [c for c in plain.puzzle.cases if not c.vary]


# ---- every puzzle reaches past what a kernel could hard-code --------------------------------
def _largest_tensor(puzzle, case) -> int:
    shapes = SpecShapes(puzzle)
    dims = {**puzzle.sizes(case), **case.blocks}
    return max(math.prod(spec.shape(dims)) for spec in shapes.all)


# Puzzle 25's interpreter scan calls the learner's combine once per element: its large case
# has 18 chunks but two rows, not 32768 elements (5 s at 33000).
FEWER_ELEMENTS = {"puzzle25"}


@pytest.mark.parametrize("puzzle_id", PUZZLE_IDS)
def test_every_puzzle_has_a_large_case(puzzle_id):
    puzzle = COURSE.puzzle(puzzle_id)
    large = [c for c in puzzle.cases if c.large]
    assert large, f"{puzzle_id}: no case with large=True"
    if puzzle_id not in FEWER_ELEMENTS:
        assert max(_largest_tensor(puzzle, c) for c in large) > 32768, f"{puzzle_id}: no tensor past 16-bit offsets"
        for case in large:  # the low end of every range too
            low = replace(case, sizes={**case.sizes, **{k: r[0] for k, r in case.vary.items()}})
            assert _largest_tensor(puzzle, low) > 32768, f"{puzzle_id} {case.label}: its range reaches below 32769"


@pytest.mark.parametrize("puzzle_id", ["puzzle15", "puzzle22", "puzzle33"])
def test_autograd_puzzles_pass_a_non_contiguous_grad_output(puzzle_id):
    assert any(c.layouts.get("grad_output") == "transposed" for c in COURSE.puzzle(puzzle_id).cases)


# ---- large cases: hook-free first, hooks when wrong ---------------------------------------
def _grader(device: str = "cpu", check_bounds: bool = True):
    """What a runner reads of its grader, for a large case's choices (nothing runs)."""
    from types import SimpleNamespace
    return SimpleNamespace(options=Options(device=device, check_bounds=check_bounds), puzzle=COURSE.puzzle("puzzle02"),
                           bounds=None)


def _runner(outcomes: dict[bool, CaseResult]):
    asked = []

    def run(hooks):
        asked.append(hooks)
        return CaseOutcome(outcomes[hooks])
    return run, asked


def _result(passed: bool, kind=None) -> CaseResult:
    return CaseResult(name="big", sizes={}, blocks={}, seed=0, grid=(1,), passed=passed, kind=kind,
                      message="" if passed else f"failed as {kind}")


def test_a_passing_large_case_runs_once_without_hooks():
    run, asked = _runner({False: _result(True)})
    assert hooks_if_failed(_grader(), BIG, run).result.passed
    assert asked == [False]


def test_a_failing_large_case_runs_again_with_hooks_and_says_what_they_found():
    run, asked = _runner({False: _result(False, "mismatch"), True: _result(False, "out_of_bounds")})
    assert hooks_if_failed(_grader(), BIG, run).result.kind == "out_of_bounds"
    assert asked == [False, True]


def test_a_failure_the_hooks_do_not_reproduce_keeps_the_first_verdict():
    run, asked = _runner({False: _result(False, "mismatch"), True: _result(True)})
    assert hooks_if_failed(_grader(), BIG, run).result.kind == "mismatch"


def test_a_large_case_that_timed_out_is_not_run_again():
    run, asked = _runner({False: _result(False, FailureKind.TIMEOUT)})
    assert hooks_if_failed(_grader(), BIG, run).result.kind == "timeout"
    assert asked == [False]


def test_a_passing_large_case_whose_programs_crossed_runs_again_with_hooks():
    """A launch went serial because its programs read or wrote each other's elements: the hooks'
    write log judges whether two of them stored one element without an atomic."""
    asked = []

    def run(hooks):
        asked.append(hooks)
        return CaseOutcome(_result(not hooks, None if not hooks else "race"), crossed=not hooks)
    assert hooks_if_failed(_grader(), BIG, run).result.kind == "race"
    assert asked == [False, True]


@pytest.mark.parametrize("large, interpreted, kind", [
    (True, True, FailureKind.INTERPRETER_LIMIT),   # the interpreter's time, not the learner's failure
    (False, True, FailureKind.TIMEOUT),            # a small case that hangs: the kernel's
    (True, False, FailureKind.TIMEOUT),            # a GPU that hangs: the kernel's
])
def test_a_large_case_the_interpreter_does_not_finish_is_not_graded_here(large, interpreted, kind):
    from grader.judge.asking import Unanswered
    from grader.judge.case_run import unanswered_case
    from grader.judge.failures import Timeout
    puzzle = COURSE.puzzle("puzzle02")
    case = replace(BIG, large=large)
    outcome = unanswered_case(case, puzzle, "case big", Unanswered(Timeout(30.0), "WorkerTimedOut", 30.0), interpreted)
    assert outcome.result.kind == kind and not outcome.result.passed
    if kind == FailureKind.INTERPRETER_LIMIT:
        assert outcome.result.message == (
            "case big: not graded here: the interpreter did not finish this large case within 30 s of CPU time, "
            "running every program of its launches on the CPU. A correct kernel can be merely slow here (small "
            "tiles make many programs and long loops), so this is neither a pass nor a fail. Grade it on a GPU "
            "(python -m grader puzzle02 --device cuda), or give the interpreter more time (python -m grader "
            "puzzle02 --timeout 120)")


@pytest.mark.parametrize("grader, case, hooks", [
    (_grader(), replace(BIG, large=False), [True]),            # a small case: hooks, as always
    (_grader(device="cuda"), BIG, [True]),                     # a GPU: the worker has no hooks to leave out
    (_grader(check_bounds=False), BIG, [False]),               # bounds checks off: nothing to rerun
])
def test_only_a_large_case_in_the_interpreter_leaves_the_hooks_out(grader, case, hooks):
    run, asked = _runner({True: _result(True), False: _result(True)})
    hooks_if_failed(grader, case, run)
    assert asked == hooks


def test_large_cases_run_again_beside_a_gpu():
    """Every case, the large ones too: a program loading what another stores shows in no value on a
    GPU; the interpreter beside it finds it, as on the CPU."""
    from types import SimpleNamespace

    from grader.channel import wire
    from grader.judge.bounds_beside import BoundsBeside
    grader = _grader(device="cuda")
    grader.bounds = "the interpreter beside the GPU"
    crossing = wire.Crossing(tensor="z", index=1024, shape=(40000,), program=(0, 0, 0), other=(1, 0, 0),
                             loaded=True, line=22, source="before = tl.load(z_ptr + offsets - B0)")
    asked = []
    grader.ask = lambda *args, **kwargs: asked.append(args) or (wire.Ran(runs=(wire.KernelRun(
        label="", reversed=False, seconds=0.1, printed="", crossings=(crossing,)),)), [])
    large = [c for c in grader.puzzle.cases if c.large]
    found = BoundsBeside(grader, lambda access: ()).checked(SimpleNamespace(), [], large[0])
    assert asked and found.kind == "race"
    assert found.text.startswith("a race: program (0, 0, 0) loaded z(1024) at line 22:")
    assert found.text.endswith("fails the same way: one verdict on every machine.)")


@pytest.mark.slow
def test_a_wrong_large_case_names_the_access_and_the_drawn_size():
    """End to end: offsets in 16 bits fail the large case hook-free, and the rerun with hooks
    names the load; under a secret the message gives the drawn N0."""
    from grader.judge.session import grade_many
    path = WRONG / "puzzle02_offsets_in_16_bits.py"
    plain, secret = (grade_many(COURSE, [("puzzle02", path)], Options(timeout=20, secret=s)).results[0]
                     for s in (0, 5))
    first = plain.first_failure
    assert first.kind == "out_of_bounds"
    assert first.message.startswith("case past_16_bit_offsets[seed=8] (N0=40000, B0=1024): out-of-bounds load of `x`")
    # the wrapped offset of whichever sampled program runs first past 32767: negative, before x
    assert re.search(r"the first is flat index -\d+, before its start", first.message), first.message
    n0 = draw(next(c for c in COURSE.puzzle("puzzle02").cases if c.large), "puzzle02", 5).sizes["N0"]
    assert secret.first_failure.message.startswith(f"case past_16_bit_offsets[seed=8] (N0={n0}, B0=1024): out-of-bounds")


@pytest.mark.slow
def test_a_kernel_fitted_to_the_public_sizes_fails_under_a_secret(tmp_path):
    """Unrolled to exactly the 18 chunks of the public large case, puzzle 7's sum passes every
    case as declared; with a secret, the row is drawn longer and the unrolled loop stops short."""
    from grader.judge.session import grade_many
    source = (WRONG / "puzzle07_unrolled_chunks.py").read_text().replace("tl.static_range(7)", "tl.static_range(18)")
    path = tmp_path / "puzzle07_fitted.py"
    path.write_text(source)
    plain, secret = (grade_many(COURSE, [("puzzle07", path)], Options(timeout=20, secret=s)).results[0] for s in (0, 1))
    assert plain.status == "pass", plain.message
    big = next(c for c in COURSE.puzzle("puzzle07").cases if c.large)
    t = draw(big, "puzzle07", 1).sizes["T"]
    assert t > 18 * 64
    assert secret.first_failure.kind == "mismatch"
    n0 = draw(big, "puzzle07", 1).sizes["N0"]
    assert re.match(rf"case many_chunks\[seed=7\] \(N0={n0}, N1={t}, T={t}, B0=1, B1=64\): wrong values in `z`: "
                    rf"{n0} of {n0} elements differ", secret.first_failure.message), secret.first_failure.message


# ---- the life cycle's one loop over the cases ----------------------------------------------
class _Passes:
    """A runner of two passes: each case carried to the second, where ``aborts`` stops the rest;
    ``early`` fails in the first pass, told to no one."""

    def __init__(self, grader, aborts: str, early: str) -> None:
        self.grader, self.aborts, self.early, self.ran, self.settled = grader, aborts, early, [], None

    def cases(self):
        return list(self.grader.puzzle.cases)

    def run(self, case, carried):
        from grader.judge.case_run import case_result
        self.ran.append((case.label, carried))
        if carried is None and case.label == self.early:
            return CaseOutcome(case_result(case, self.grader.puzzle, False, "exception", "raised"), tell=False)
        if carried is None:
            return CaseOutcome(carried=f"recorded {case.label}")
        if case.label == self.aborts:
            return CaseOutcome(case_result(case, self.grader.puzzle, False, "crash", "died"), f"{case.label} crashed")
        return CaseOutcome(case_result(case, self.grader.puzzle, True))

    def next_pass(self, carried, aborted):
        return [c for c in self.grader.puzzle.cases if c.label in carried]

    def settle(self, results):
        self.settled = sorted(results)


def test_the_life_cycle_runs_every_pass_in_one_loop_and_skips_after_an_abort():
    from grader.judge.kinds.kind import PuzzleKind
    puzzle = COURSE.puzzle("puzzle02")
    names = [c.label for c in puzzle.cases]
    kind = replace(kind_of(puzzle), runner=lambda: lambda grader: _Passes(grader, names[1], names[-1]),
                   checks=lambda: ())
    told = []
    grader = PuzzleGrader(COURSE, "puzzle02", COURSE.solution_file("puzzle02"), None, Options(), kind=kind,
                          on_case=lambda puzzle_id, result: told.append(result.seed))
    assert isinstance(kind, PuzzleKind) and not grader.state.compile_beside
    results = grader._cases()
    runner = grader.runner
    # the first pass carries all but the last; the second stops after names[1] crashed
    assert runner.ran == [(n, None) for n in names] + [(n, f"recorded {n}") for n in names[:2]]
    assert [r.name for r in results] == [c.name for c in puzzle.cases]  # the puzzle's order, whichever pass decided each
    assert [r.passed for r in results] == [True] + [False] * (len(names) - 1)
    assert [r.kind for r in results[2:-1]] == [FailureKind.SKIPPED] * (len(names) - 3)
    assert results[2].message.endswith(f"{names[1]} crashed")
    assert results[-1].kind == "exception"  # decided in the first pass: not run again, not skipped
    assert told == [0, 1]
    assert runner.settled == sorted(c.label for c in puzzle.cases)


class _FirstFails:
    """A runner of one pass whose first case fails and the others pass."""

    def __init__(self, grader) -> None:
        self.grader, self.ran = grader, []

    def cases(self):
        return list(self.grader.puzzle.cases)

    def run(self, case, carried):
        from grader.judge.case_run import case_result
        self.ran.append(case.label)
        first = case.label == self.grader.puzzle.cases[0].label
        return CaseOutcome(case_result(case, self.grader.puzzle, not first, None if not first else "mismatch", "wrong"))

    def next_pass(self, carried, aborted):
        return []

    def settle(self, results):
        pass


@pytest.mark.parametrize("device, skipped", [("cpu", True), ("cuda", False)])
def test_once_a_case_failed_the_interpreter_skips_the_large_cases(device, skipped):
    """Every program of a large case's launches would run in the interpreter, for a kernel already
    wrong: the learner sees the failing case at once. A GPU runs them all the same."""
    puzzle = COURSE.puzzle("puzzle02")
    kind = replace(kind_of(puzzle), runner=lambda: _FirstFails, checks=lambda: ())
    grader = PuzzleGrader(COURSE, "puzzle02", COURSE.solution_file("puzzle02"), None, Options(device=device),
                          kind=kind)
    results = grader._cases()
    large = [r for r, c in zip(results, puzzle.cases) if c.large]
    assert large and all(r.kind == (FailureKind.SKIPPED if skipped else None) for r in large)
    assert (large[0].label in grader.runner.ran) != skipped
    if skipped:
        assert large[0].message.endswith(f"not run: case {puzzle.cases[0].label} already failed, and a large case "
                                         f"runs every program of its launches in the interpreter: fix that one first")


def test_under_a_secret_each_student_gets_their_own_inputs_and_drawn_sizes():
    """A batch with --seed-secret mixes the student into every input seed and drawn size, so a
    failure message one student reads says nothing of another's case."""
    from grader.course.case import draw
    from grader.judge.plan import case_seed, students_secret
    assert students_secret(0, "ada") == 0 and students_secret(7, "") == 7
    ada, bob = students_secret(7, "ada"), students_secret(7, "bob")
    assert len({ada, bob, 7}) == 3 and students_secret(7, "ada") == ada
    puzzle = COURSE.puzzle("puzzle02")
    case = next(c for c in puzzle.cases if c.vary)
    assert case_seed(puzzle, case, ada) != case_seed(puzzle, case, bob)
    drawn = {tuple(sorted(draw(case, puzzle.id, students_secret(7, name)).sizes.items()))
             for name in ("ada", "bob", "cy", "dee", "eve")}
    assert len(drawn) > 1
