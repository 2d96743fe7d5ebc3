"""How grading one puzzle ended, and what each ending means: whether it counts, and the status the
learner's progress file saves for it. How each is shown (its mark, words, colour, cell, ...) is
the renderers' business: :mod:`grader.report.status_words`.
"""
from __future__ import annotations

from grader.judge.failures.catalogue import StrEnum
from grader.source.attempts import SavedStatus


class Status(StrEnum):
    """How grading one puzzle ended. A ``StrEnum``: each member is its own text, so JSON, CSV
    and every report read exactly as they did when statuses were plain strings."""

    PASS = "pass"
    FAIL = "fail"                    # tried, and wrong: the case or check that failed has a kind
    NOT_ATTEMPTED = "not_attempted"  # still the stub
    UNSUPPORTED = "unsupported"      # the installed Triton lacks an API the puzzle needs
    INTERPRETER_LIMIT = "interpreter_limit"  # compiles for a GPU, but the interpreter cannot run it
    ERROR = "error"                  # the grader itself broke

    @property
    def counts(self) -> bool:
        """A point either way; False: the puzzle cannot be decided here, which is not a fail."""
        return self not in (Status.UNSUPPORTED, Status.INTERPRETER_LIMIT)

    @property
    def saved(self) -> SavedStatus:
        """What the progress file saves for it (as check() in a notebook does)."""
        return _SAVED[self]


_SAVED = {
    Status.PASS: SavedStatus.PASSED,
    Status.FAIL: SavedStatus.FAILING,
    Status.NOT_ATTEMPTED: SavedStatus.NOT_ATTEMPTED,
    Status.UNSUPPORTED: SavedStatus.UNSUPPORTED,
    Status.INTERPRETER_LIMIT: SavedStatus.ON_A_GPU,
    Status.ERROR: SavedStatus.FAILING,  # a broken grader saves no better than a failure
}
