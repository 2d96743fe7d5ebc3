"""Grading a class: ``python -m grader batch SUBMISSIONS_DIR``.

Each entry of the folder is one student: a folder (their ``puzzles/*.py`` or any ``.py`` and
``.ipynb`` files in it), a single ``.py`` file, or a notebook. For every student:

* their files are read by :mod:`grader.source.intake` (no symbolic link followed, sizes and counts
  capped, each student a distinct name and folder, no file overwriting another);
* their files are reduced to **definitions only** (imports, functions, classes, constants;
  no calls, no attribute assignments, no decorators but Triton's and Python's own), so that
  nothing a submission does at import time (monkeypatching torch or the grader, writing
  files, printing fake results) ever runs;
* they are graded by a worker process of their own, with a timeout per case and a memory
  cap, so a crash, a hang or a memory blow-up costs that student that puzzle, nothing more;
* the spec, cases and tolerances come from the course's own ``puzzles/``; inputs are made and
  outputs judged in this process, from seeds a ``--seed-secret`` can make unpredictable.

The batch never stops early: every student is in the report, with the reason when their
code could not even be read.
"""
from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from grader.judge.batch_resume import not_graded
from grader.course.loader import Course
from grader.source.intake import Student, prepare, prepare_class  # noqa: F401  (prepare: for callers of one student)
from grader.judge.options import Options
from grader.report.progress import Progress
from grader.judge.results import StudentResult
from grader.judge.student import grade_student


@dataclass(frozen=True)
class ClassRun:
    """A batch's students in the submissions' order; ``stopped``: Ctrl-C ended it early, and
    the students it did not reach are in ``results`` as "not graded"."""
    results: list[StudentResult]
    stopped: bool = False


def grade_class(course: Course, folder: Path, options: Options, jobs: int = Options.JOBS,
                memory_mb: int = Options.BATCH_MEMORY_MB, progress: bool = True, engine: str = "local",
                address: str | None = None, done: Mapping[str, StudentResult] | None = None) -> ClassRun:
    """Grade every student of ``folder``, except those in ``done`` (a resumed batch), whose
    results are kept. ``engine``: "local" (threads on this machine) or "ray" (one Ray task per
    student, on the cluster at ``address`` or a local Ray runtime)."""
    workdir = Path(tempfile.mkdtemp(prefix="triton-puzzles-batch-"))
    try:
        for puzzle_id in course.ids:
            course.puzzle(puzzle_id)  # load the course once, before any thread
        students = prepare_class(folder, course, workdir)
        done = dict(done or {})
        todo = [s for s in students if s.name not in done]
        bar = Progress(len(todo)) if progress else None

        def finished(result: StudentResult) -> None:
            if bar is not None:
                bar.step(result.student, f"{result.total}/{len(course.ids)}")

        if engine == "ray":
            from grader.judge.cluster import grade_class_on_ray, gpus_per_task
            graded, stopped = grade_class_on_ray(course, todo, options, memory_mb, address, finished,
                                                 gpus_per_task(options))
        else:
            graded, stopped = _grade_here(course, todo, options, jobs, memory_mb, finished)
        if bar is not None:
            bar.close()
        by_name = {**done, **{r.student: r for r in graded if r is not None}}
        return ClassRun([by_name.get(s.name) or not_graded(s.name, s.problems, "the batch was stopped (Ctrl-C)")
                         for s in students], stopped)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _grade_here(course: Course, students: list[Student], options: Options, jobs: int, memory_mb: int,
                finished) -> tuple[list[StudentResult | None], bool]:
    """The local engine: ``jobs`` threads, each grading one student at a time in its own sandbox."""
    from grader.judge.session import run_pool

    # Fewer students than jobs (one student, a resumed batch's last few): each grades with more threads.
    threads = max(1, jobs // max(1, len(students)))

    def grade(_thread: int, student: Student) -> StudentResult:
        try:
            result = grade_student(course, student, options, memory_mb, threads)
        except Exception as exc:  # a grader bug: the student still appears, with the reason
            result = StudentResult(student.name, (), student.problems + (
                f"grader error: {type(exc).__name__}: {exc}",), 0.0)
        finished(result)
        return result

    stop = threading.Event()
    return run_pool(students, jobs, grade, stop=stop), stop.is_set()


def write_reports(results: list[StudentResult], puzzle_ids: list[str], out: Path, seconds: float,
                  gradescope: bool = False) -> None:
    """grades.csv, results.json and junit.xml (and one Gradescope results.json per student).
    Written only after every worker has finished: no submission runs while they are written."""
    from grader.report import batch_files as render_batch
    out.mkdir(parents=True, exist_ok=True)
    (out / "grades.csv").write_text(render_batch.grades_csv(results, puzzle_ids))
    (out / "results.json").write_text(render_batch.results_json(results, puzzle_ids, seconds))
    (out / "junit.xml").write_text(render_batch.junit_xml(results))
    if gradescope:
        for student in results:
            folder = out / "gradescope" / student.student
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "results.json").write_text(render_batch.gradescope(student))
