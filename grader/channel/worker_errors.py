"""How a request to a worker goes unanswered: the worker died, or ran past its limit. Raised by
:mod:`grader.channel.worker_pool`; here, apart from it, so that the judge's code that catches them
(:mod:`grader.judge.asking`) needs no process machinery to name them."""
from __future__ import annotations


class WorkerDied(Exception):
    def __init__(self, returncode: int | None, stderr_tail: str, corrupted: bool = False) -> None:
        super().__init__(f"worker died ({returncode}): {stderr_tail[-500:]}")
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        self.corrupted = corrupted  # alive, but it wrote garbage into the channel


class WorkerTimedOut(Exception):
    """A request past its limit: ``limit`` CPU seconds, or (``wall``, where set) the wall-clock
    backstop that was waited for a worker that spent little CPU time (sleeping, or starved)."""

    def __init__(self, limit: float | None = None, wall: float | None = None) -> None:
        super().__init__(f"past {limit} s of CPU time" if wall is None else f"no answer in {wall:.0f} s")
        self.limit, self.wall = limit, wall
