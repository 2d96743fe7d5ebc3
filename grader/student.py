"""Grading one student of a batch: every puzzle of the course, in one worker of the student's
own, with the student's sanitised files. Used by :mod:`grader.batch` on this machine and by
:mod:`grader.cluster` on a Ray node (kept apart from batch.py so that neither imports the other).
"""
from __future__ import annotations

import re
import time
from pathlib import PurePosixPath

from grader.course import Course
from grader.intake import Student
from grader.options import Options
from grader.results import CheckResult, FailureKind, PuzzleResult, Status, StudentResult


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
        return PuzzleResult(puzzle=puzzle_id, title=puzzle.title, status=Status.NOT_ATTEMPTED,
                            source=student.name, device=options.device,
                            message=f"no `{puzzle.kernel}` in the submission")
    syntax = any("SyntaxError" in r or "IndentationError" in r or "TabError" in r for r in reasons)
    kind = FailureKind.SYNTAX if syntax else FailureKind.EXCEPTION
    message = ("; ".join(reasons[:3]) + f"; so `{puzzle.kernel}` was not graded. "
               "Fix the file, then submit again.")
    # Sources are named as graded ones are: under the student's row, never this machine's path.
    return PuzzleResult(puzzle=puzzle_id, title=puzzle.title, status=Status.FAIL, source=student.name,
                        device=options.device, message=message,
                        checks={"load": CheckResult(False, message, kind)})


def _unread_file(problem: str) -> str | None:
    """The name of the .py or .ipynb file a problem line of intake says it could not read."""
    match = re.match(r"^(?P<path>.+?\.(?:py|ipynb)):? (?:could not be read|is .*not read)", problem)
    return None if match is None else PurePosixPath(match.group("path")).name


def grade_student(course: Course, student: Student, options: Options,
                  memory_mb: int = Options.BATCH_MEMORY_MB, threads: int = 1) -> StudentResult:
    """Every puzzle of ``student``'s, on ``threads`` threads of workers in one jail of theirs."""
    from dataclasses import replace

    from grader.session import Grading

    started = time.perf_counter()
    # The student's own sanitised folder and the course's puzzles/, nothing else: not the other
    # students, not solutions/, not the reports. A student with no file starts no worker.
    targets = [(pid, student.files[pid]) for pid in course.ids if pid in student.files]
    with Grading(course, [student.folder / "_"], replace(options, memory_mb=memory_mb), threads,
                 now=False, kernels=[path for _, path in targets]) as grading:
        graded = dict(zip((pid for pid, _ in targets), grading.grade(targets).results))
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
    return StudentResult(student.name, tuple(results), student.problems, time.perf_counter() - started)
