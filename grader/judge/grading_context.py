"""What a grading context offers the tools that borrow one (pictures, ``--bench``, ``--perf``) and
a class's grading, which opens one per student: the course, the options, its workers, and grading
itself. :class:`grader.judge.session.Grading` is the one; they name it as this Protocol, so that
they need not import the session, which sits above every kind's runner (tests/test_layout.py caps
the import chain through them)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from grader.channel.worker_pool import WorkerProcess
    from grader.course.loader import Course
    from grader.judge.options import Options
    from grader.judge.results import Report


class GradingContext(Protocol):
    """A :class:`grader.judge.session.Grading`, as its borrowers use it."""

    course: Course
    options: Options

    def worker(self, thread: int = 0) -> WorkerProcess: ...

    def tracer(self, thread: int = 0) -> WorkerProcess: ...

    def reference(self, solution: Path) -> WorkerProcess: ...

    def compiler(self, solution: Path | None = None) -> WorkerProcess: ...

    def grade(self, targets: list[tuple[str, Path]], on_result=None, on_case=None) -> Report: ...

    def __enter__(self) -> GradingContext: ...

    def __exit__(self, *exc) -> None: ...
