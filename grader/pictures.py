"""Memory-access pictures for one case: the learner's kernel beside the reference solution.

The kernels run in the interpreter (a worker process, as for grading) with every access
recorded; :mod:`grader.report.pictures` draws the result. This half runs learner code, so it
stays outside ``grader/report/``.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from grader.course import Course, CourseError
from grader.options import Options
from grader.plan import SpecShapes
from grader.puzzle import Case
from grader.report.pictures import Picture, draw_case
from grader.results import FailureKind, PuzzleResult
from grader.isolation import worker_jail
from grader.worker_pool import WorkerProcess


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


def picture(course: Course, puzzle_id: str, kernel_file: Path, path: Path | None = None,
            case_name: str | None = None, result: PuzzleResult | None = None,
            timeout: float = Options.timeout, worker: WorkerProcess | None = None,
            reference_worker: WorkerProcess | None = None) -> Picture:
    """The picture of one case. ``worker`` and ``reference_worker`` (interpreter workers whose jails
    read the kernel file and the solution) are used and recycled, where given (a notebook keeps
    them warm); else each trace gets a jail of its own, closed after it."""
    from grader.grade import PuzzleGrader

    puzzle = course.puzzle(puzzle_id)
    case = choose_case(puzzle.cases, case_name, result)
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="triton-puzzles-")) / f"{puzzle_id}_{case.name}.png"
    options = Options(device="cpu", timeout=timeout, compile_check=False)

    def trace(file: Path, given: WorkerProcess | None):
        own = given or WorkerProcess("cpu", worker_jail(course.root, [file]))
        try:
            return PuzzleGrader(course, puzzle_id, file, own, options).traced(case)
        finally:
            own.recycle() if given is not None else own.close()

    outcome, trace_yours, note = trace(Path(kernel_file), worker)
    verdict = note or ("passes" if outcome.passed else f"fails: {outcome.kind}")
    columns = [("yours", trace_yours, note)]
    solution = reference_file(course, puzzle_id, kernel_file)
    if solution is not None:  # a worker of its own: the learner's worker never sees solutions/
        _, reference, ref_note = trace(solution, reference_worker)
        columns.append(("reference", reference, ref_note))
    shapes = SpecShapes(puzzle)
    dims = {**puzzle.sizes(case), **case.blocks}
    tensors = [(s.name, shapes.buffer_dims(s).shape(dims)) for s in shapes.all]
    return draw_case(Path(path), f"{puzzle_id} {puzzle.title}", case.label, dims, tensors,
                     puzzle.launch_grid(case), columns, verdict)
