"""Memory-access pictures for one case: the learner's kernel beside the reference solution.

The kernels run in the interpreter (a worker process, as for grading) with every access
recorded; the front-end hands the :class:`Traced` result to :mod:`grader.report.pictures`, which
draws it. This half runs learner code, so it stays outside ``grader/report/``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.channel.worker_pool import WorkerProcess
from grader.course.loader import Course, CourseError
from grader.course.puzzle import Case
from grader.judge.failures import FailureKind
from grader.judge.options import Options
from grader.judge.plan import SpecShapes
from grader.judge.results import PuzzleResult

if TYPE_CHECKING:
    from grader.judge.session import Grading


def choose_case(cases: tuple[Case, ...], wanted: str | None, result: PuzzleResult | None) -> Case:
    """The named case, else the failing case the report leads with (its most telling), else
    the first failing one, else the classic configuration."""
    if wanted:
        for case in cases:
            if wanted in (case.name, case.label):
                return case
        names = ", ".join(dict.fromkeys(c.name for c in cases))
        raise CourseError(f"no case {wanted!r}; the cases are {names}")
    if result is not None:
        telling = result.telling_failure
        for case in cases:
            if getattr(telling, "label", None) == case.label:
                return case
        failing = {c.label for c in result.cases if not c.passed and c.kind != FailureKind.SKIPPED}
        for case in cases:
            if case.label in failing:
                return case
    return cases[0]


def reference_file(course: Course, puzzle_id: str, kernel_file: Path) -> Path | None:
    """The course's solution of ``puzzle_id``, drawn beside the learner's kernel: None where the
    course has none (a learner's copy) or where it is the kernel drawn."""
    solution = course.root / "solutions" / course.puzzle_file(puzzle_id).name
    if solution.is_file() and solution.resolve() != Path(kernel_file).resolve():
        return solution
    return None


@dataclass(frozen=True)
class Traced:
    """One case's accesses, the learner's and the reference's: what a picture shows
    (:func:`grader.report.pictures.draw_traced` takes it)."""

    heading: str
    case: str
    dims: dict[str, int]
    tensors: list[tuple[str, tuple[int, ...]]]
    grid: tuple[int, ...]
    traces: list[tuple[str, dict | None, str]]
    verdict: str
    file_name: str  # where a picture goes when no path is given


def traced(grading: Grading, puzzle_id: str, kernel_file: Path, case_name: str | None = None,
           result: PuzzleResult | None = None, timeout: float = Options.timeout) -> Traced:
    """One case traced by ``grading``'s interpreter worker, and the course's solution beside it by
    a worker of the context's that alone reads it. Each worker is recycled after its trace."""
    from grader.judge.grade import PuzzleGrader
    from grader.judge.kinds import kind_of

    course = grading.course
    puzzle = course.puzzle(puzzle_id)
    case = choose_case(puzzle.cases, case_name, result)
    options = Options(device="cpu", timeout=timeout, compile_check=False)

    def trace(file: Path, worker: WorkerProcess):
        try:
            return PuzzleGrader(course, puzzle_id, file, worker, options, kind=kind_of(puzzle)).traced(case)
        finally:
            worker.recycle()

    outcome, trace_yours, note = trace(Path(kernel_file), grading.tracer())
    verdict = note or ("passes" if outcome.passed else f"fails: {outcome.kind}")
    columns = [("yours", trace_yours, note)]
    solution = reference_file(course, puzzle_id, kernel_file)
    if solution is not None:
        _, reference, ref_note = trace(solution, grading.reference(solution))
        columns.append(("reference", reference, ref_note))
    shapes = SpecShapes(puzzle)
    dims = {**puzzle.sizes(case), **case.blocks}
    tensors = [(s.name, shapes.buffer_dims(s).shape(dims)) for s in shapes.all]
    return Traced(f"{puzzle_id} {puzzle.title}", case.label, dims, tensors, puzzle.launch_grid(case), columns, verdict,
                  f"{puzzle_id}_{case.name}.png")
