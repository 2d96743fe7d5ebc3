"""Grading a class (``python -m grader batch SUBMISSIONS_DIR``): every student, on this
machine's threads or one Ray task each (:mod:`.cluster`).

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

The batch never stops early: every entry of the folder is in the report, a student with the
reason when their code could not even be read, or an entry refused with why (a link, an empty
folder, an archive: :func:`grader.source.intake.look`).
"""
from __future__ import annotations

import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Callable, Mapping

from grader.course.loader import Course
from grader.judge.batch_resume import not_graded, refused
from grader.judge.failures import FailureKind
from grader.judge.options import Options
from grader.judge.results import GRADER_ERROR, CheckName, CheckResult, PuzzleResult, Status, StudentResult
from grader.judge.session import Grading
from grader.judge.similarity.find import similar_submissions
from grader.judge.similarity.model import SimilarityReport
from grader.judge.thread_pool import run_pool
from grader.source.intake import Student, prepare_class


@dataclass(frozen=True)
class ClassRun:
    """A batch's students in the submissions' order; ``stopped``: Ctrl-C ended it early, and
    the students it did not reach are in ``results`` as "not graded"; ``similarity``: the pairs
    of similar submissions (:mod:`.similarity`), None when not looked for."""
    results: list[StudentResult]
    stopped: bool = False
    similarity: SimilarityReport | None = None


def grade_class(course: Course, folder: Path, options: Options, jobs: int = Options.JOBS,
                memory_mb: int = Options.BATCH_MEMORY_MB, engine: str = "local", address: str | None = None,
                done: Mapping[str, StudentResult] | None = None, on_start: Callable[[int], None] | None = None,
                on_result: Callable[[StudentResult], None] | None = None, similarity: bool = True) -> ClassRun:
    """Grade every student of ``folder``, except those in ``done`` (a resumed batch), whose
    results are kept. ``engine``: "local" (threads on this machine) or "ray" (one Ray task per
    student, on the cluster at ``address`` or a local Ray runtime). ``on_start`` is told how
    many students are to be graded, once their files are read; ``on_result`` sees each
    student's result as it comes (the command line's progress bar). ``similarity``: compare every
    student's code with every other's (all of them, a resumed batch's earlier ones included),
    from the sanitised copies, before they are deleted."""
    workdir = Path(tempfile.mkdtemp(prefix="triton-puzzles-batch-"))
    try:
        for puzzle_id in course.ids:
            course.puzzle(puzzle_id)  # load the course once, before any thread
        rows = prepare_class(folder, course, workdir)
        students = [s for s in rows if not s.refused]
        kept = _resumed(students, done or {})
        todo = [s for s in students if s.name not in kept]
        if on_start is not None:
            on_start(len(todo))
        finished = on_result or (lambda result: None)
        if engine == "ray":
            from grader.judge.cluster import gpus_per_task, grade_class_on_ray
            graded, stopped = grade_class_on_ray(course, todo, options, memory_mb, grade_student, address, finished,
                                                 gpus_per_task(options))
        else:
            graded, stopped = _grade_here(course, todo, options, jobs, memory_mb, finished, grade_student)
        by_name = {**kept, **{r.student: r for r in graded if r is not None}}
        similar = _similarity(course, students, by_name) if similarity else None
        stopped_early = "the batch was stopped (Ctrl-C)"
        return ClassRun([refused(s.name, s.id, s.refused) if s.refused else
                         _as_submitted(by_name.get(s.name) or not_graded(s.name, s.problems, stopped_early), s)
                         for s in rows], stopped, similar)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _resumed(students: list[Student], done: Mapping[str, StudentResult]) -> dict[str, StudentResult]:
    """The earlier results a resumed batch keeps, by the row name each student has now: matched by
    the id as submitted (a hash in a row's name may have come or gone with the class's other ids);
    a result written without its id only where it has the row's name and the id needs no cleaning.
    An entry refused then is looked at afresh: it may be gradable now (its permissions fixed)."""
    by_id = {r.submitted_id: r for r in done.values() if r.submitted_id and not r.refused}
    by_name = {r.student: r for r in done.values() if not r.submitted_id and not r.refused}
    kept = {}
    for student in students:
        result = by_id.get(student.variant_id) or (
            by_name.get(student.name) if student.name == student.variant_id else None)
        if result is not None:
            kept[student.name] = replace(result, student=student.name, submitted_id=student.variant_id)
    return kept


def _as_submitted(result: StudentResult, student: Student) -> StudentResult:
    """The result under the id the student handed in, whichever way it came (graded, resumed from
    a results.json written before the id was kept, or not reached)."""
    return result if result.submitted_id else replace(result, submitted_id=student.variant_id)


def _similarity(course: Course, students: list[Student], results: Mapping[str, StudentResult]) -> SimilarityReport:
    """The similar pairs (by source, and by the TTIR ``results``' compile checks recorded); a bug
    of the pass's own costs the pairs, never the class's grades."""
    try:
        return similar_submissions(course, students, results)
    except Exception as exc:
        return SimilarityReport((), (), "", error=f"grader error: {type(exc).__name__}: {exc}")


def _grade_here(course: Course, students: list[Student], options: Options, jobs: int, memory_mb: int,
                finished, grade_student: Callable[..., StudentResult]) -> tuple[list[StudentResult | None], bool]:
    """The local engine: ``jobs`` threads, each grading one student at a time in its own sandbox."""
    # Fewer students than jobs (one student, a resumed batch's last few): each grades with more threads.
    threads = max(1, jobs // max(1, len(students)))

    def grade(_thread: int, student: Student) -> StudentResult:
        try:
            result = grade_student(course, student, options, memory_mb, threads)
        except Exception as exc:  # a grader bug: the student still appears, with the reason
            result = StudentResult(student.name, (), student.problems + (
                f"{GRADER_ERROR} {type(exc).__name__}: {exc}",), 0.0, student.attempts, student.variant_id)
        finished(result)
        return result

    stop = threading.Event()
    return run_pool(students, jobs, grade, stop=stop), stop.is_set()


# ---- one student ----------------------------------------------------------------------------

def _missing(course: Course, puzzle_id: str, student: Student, options: Options) -> PuzzleResult:
    """No file of the student's defines the kernel: not attempted, unless a file that looks
    like it holds the puzzle (its name starts with the puzzle's id; or a file named after no
    puzzle, where no kernel was found at all) could not be read: then that is the puzzle's
    failure, with intake's reason (the file, the error and its line)."""
    puzzle = course.puzzle(puzzle_id)
    unread = {p: name for p in student.problems if (name := _unread_file(p)) is not None}
    own = [p for p, name in unread.items() if name.startswith(puzzle_id)]
    # a file named after no puzzle (alice.py) may have held any of them, if nothing else was read
    anyone = [p for p, name in unread.items() if not re.match(r"puzzle\d", name)] if not student.files else []
    reasons = own or anyone
    if not reasons:
        # a file holding a kernel of the same name, not graded for this puzzle: say which, and why
        said = student.skipped.get(puzzle_id)
        return PuzzleResult(puzzle=puzzle_id, title=puzzle.title, status=Status.NOT_ATTEMPTED,
                            source=student.name, device=options.device,
                            message=f"not attempted: {said}" if said else f"no `{puzzle.kernel}` in the submission")
    syntax = any("SyntaxError" in r or "IndentationError" in r or "TabError" in r for r in reasons)
    message = ("; ".join(reasons[:3]) + f"; so `{puzzle.kernel}` was not graded. "
               "Fix the file, then submit again.")
    # Sources are named as graded ones are: under the student's row, never this machine's path.
    kind = FailureKind.SYNTAX if syntax else FailureKind.EXCEPTION
    return PuzzleResult(puzzle=puzzle_id, title=puzzle.title, status=Status.FAIL, source=student.name,
                        device=options.device, message=message,
                        checks={CheckName.LOAD: CheckResult(False, message, kind)})


def _unread_file(problem: str) -> str | None:
    """The name of the .py or .ipynb file a problem line of intake says it could not read."""
    match = re.match(r"^(?P<path>.+?\.(?:py|ipynb)):? (?:could not be read|is .*not read)", problem)
    return None if match is None else PurePosixPath(match.group("path")).name


def grade_student(course: Course, student: Student, options: Options,
                  memory_mb: int = Options.BATCH_MEMORY_MB, threads: int = 1) -> StudentResult:
    """Every puzzle of ``student``'s, on ``threads`` threads of workers in one jail of theirs (one
    :class:`grader.judge.session.Grading`)."""
    started = time.perf_counter()
    # The student's own sanitised folder and the course's puzzles/, nothing else: not the other
    # students, not solutions/, not the reports. A student with no file starts no worker.
    targets = [(pid, student.files[pid]) for pid in course.ids if pid in student.files]
    # With variants on, the student's own values of the puzzles' free constants (grader.course.variant).
    whose = student.variant_id if options.variants else ""
    # With a secret, each student's inputs and drawn sizes come from the secret, the student and the puzzle.
    mine = replace(options, memory_mb=memory_mb, student=whose, seeded_for=student.variant_id if options.secret else "")
    with Grading(course, [student.folder / "_"], mine, threads,
                 now=False, kernels=[path for _, path in targets]) as context:
        graded = dict(zip((pid for pid, _ in targets), context.grade(targets).results))
    results = []
    for puzzle_id in course.ids:
        path = student.files.get(puzzle_id)
        if path is None:
            results.append(_missing(course, puzzle_id, student, options))
            continue
        # The file as the student named it, under their row's name: the sanitised copy is gone
        # once the batch ends, and its folder differs from run to run and node to node.
        results.append(replace(graded[puzzle_id], source=str(PurePosixPath(student.name) /
                                                             path.relative_to(student.folder).as_posix())))
    return StudentResult(student.name, tuple(results), student.problems, time.perf_counter() - started,
                         student.attempts, student.variant_id)
