"""How grading one puzzle ended, and the one catalogue of what each ending is called: its mark,
its words, its colour, its cell in ``grades.csv``, whether it counts. Every renderer reads it
here, so that a terminal, a notebook, the class page and the class's files never disagree.
"""
from __future__ import annotations

from dataclasses import dataclass

from grader.judge.failures.catalogue import StrEnum


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
    def outcome(self) -> Outcome:
        return OUTCOMES[self]


@dataclass(frozen=True)
class Outcome:
    """What one status is called, by every place that shows it."""

    mark: str           # a terminal's line starts with it
    cell: str           # the class page's mark in a student's row, and that row's CSS class:
    css: str            # "none" is grey, a status that says nothing of the kernel's worth
    colour: str         # a notebook's headline
    csv: int | str      # grades.csv: SUM counts the passes, COUNTBLANK the puzzles nobody tried
    words: str          # the progress file's word, as check() saves it
    rank: int           # how far that word is along the way: a progress file keeps the best
    tally: str          # the terminal's closing count: "3 failed"
    group: str          # the class page's share of a puzzle (a key of GROUP_COLOURS)
    junit: str          # junit.xml's element under the testcase; "" for none
    counts: bool        # a point either way; False: the puzzle cannot be decided here, not a fail
    # The headline of a status that has no cases to count, as the terminal and a notebook say it
    # (str.format: head is "<mark> <puzzle> <title>"; title and message escaped for HTML).
    terminal: str = ""
    notebook: str = ""


GROUP_COLOURS = {"passed": "#2e7d32", "failed": "#c62828", "not attempted": "#bdbdbd", "not decided here": "#8d6e63"}

OUTCOMES = {
    Status.PASS: Outcome("✓", "✓", "pass", "#2e7d32", 1, "passed", 3, "passed", "passed", "", True),
    Status.FAIL: Outcome("✗", "✗", "fail", "#c62828", 0, "failing", 2, "failed", "failed", "failure", True),
    Status.NOT_ATTEMPTED: Outcome(
        "·", "–", "none", "#757575", "", "not attempted", 0, "not attempted", "not attempted", "skipped", True,
        "{head}: not attempted", "{puzzle} {title}: not attempted yet (the kernel is still the stub)"),
    # The three below are neither passed nor failed: grades.csv says why ("n/a": this Triton
    # cannot run the puzzle; "gpu": the interpreter cannot, the kernel compiles; "error").
    Status.UNSUPPORTED: Outcome(
        "–", "n/a", "none", "#757575", "n/a", "unsupported", 1, "unsupported", "not decided here", "skipped", False,
        "{head}: unsupported, not a fail\n    {message}", "{puzzle} {title}: {message}"),
    Status.INTERPRETER_LIMIT: Outcome(
        "?", "gpu", "none", "#757575", "gpu", "grade on a GPU", 2,
        "to grade on a GPU (the interpreter cannot run them)", "not decided here", "skipped", False,
        "{head}: not graded here, the interpreter cannot run it (not a fail)\n    {message}",
        "{puzzle} {title}: not graded here (not a fail): {message}"),
    Status.ERROR: Outcome(
        "!", "!", "error", "#e65100", "error", "failing", 2, "grader error(s)", "not decided here", "error", True,
        "{head}: GRADER ERROR (not your fault; please report it)\n    {message}",
        "{puzzle}: grader error (not your fault): {message}"),
}

# The progress file's words, how far along each is (FAIL and ERROR share "failing").
RANK = {outcome.words: outcome.rank for outcome in OUTCOMES.values()}
