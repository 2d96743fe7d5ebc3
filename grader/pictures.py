"""Memory-access pictures for one case: the learner's kernel beside the reference solution.

The kernels run in the interpreter (a worker process, as for grading) with every access
recorded; :mod:`grader.report.pictures` draws the result. This half runs learner code, so it
stays outside ``grader/report/``.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from .course import Course, CourseError
from .options import Options
from .plan import SpecShapes
from .puzzle import Case
from .report.pictures import Picture, draw_case
from .results import PuzzleResult
from .isolation import worker_jail
from .worker_pool import WorkerProcess


def choose_case(cases: tuple[Case, ...], wanted: str | None, result: PuzzleResult | None) -> Case:
    """The named case, else the first failing one, else the classic configuration."""
    if wanted:
        for case in cases:
            if wanted in (case.name, case.label):
                return case
        names = ", ".join(dict.fromkeys(c.name for c in cases))
        raise CourseError(f"no case {wanted!r}; the cases are {names}")
    if result is not None:
        failing = {c.label for c in result.cases if not c.passed and c.kind != "skipped"}
        for case in cases:
            if case.label in failing:
                return case
    return cases[0]


def picture(course: Course, puzzle_id: str, kernel_file: Path, path: Path | None = None,
            case_name: str | None = None, result: PuzzleResult | None = None,
            timeout: float = Options.timeout) -> Picture:
    from .grade import PuzzleGrader

    puzzle = course.puzzle(puzzle_id)
    case = choose_case(puzzle.cases, case_name, result)
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="triton-puzzles-")) / f"{puzzle_id}_{case.name}.png"
    worker = WorkerProcess("cpu", worker_jail(course.root, [kernel_file]))
    options = Options(device="cpu", timeout=timeout, compile_check=False)
    try:
        columns = []
        mine = PuzzleGrader(course, puzzle_id, kernel_file, worker, options)
        outcome, trace, note = mine.traced(case)
        verdict = note or ("passes" if outcome.passed else f"fails: {outcome.kind}")
        columns.append(("yours", trace, note))
        solution = course.root / "solutions" / course.puzzle_file(puzzle_id).name
        if solution.is_file() and solution.resolve() != Path(kernel_file).resolve():
            # A worker of its own: the learner's worker never sees solutions/.
            own = WorkerProcess("cpu", worker_jail(course.root, [solution]))
            try:
                _, reference, ref_note = PuzzleGrader(course, puzzle_id, solution, own, options).traced(case)
            finally:
                own.close()
            columns.append(("reference", reference, ref_note))
    finally:
        worker.close()
    shapes = SpecShapes(puzzle)
    dims = {**puzzle.sizes(case), **case.blocks}
    tensors = [(s.name, shapes.buffer_dims(s).shape(dims)) for s in shapes.all]
    return draw_case(Path(path), f"{puzzle_id} {puzzle.title}", case.label, dims, tensors,
                     puzzle.launch_grid(case), columns, verdict)
