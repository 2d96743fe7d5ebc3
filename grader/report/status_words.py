"""How each status is shown, by every renderer: a terminal, a notebook, the class page, the
class's files and a progress bar read it here, so that they never disagree. What a status means
(whether it counts, what the progress file saves) is the judge's: :mod:`grader.judge.status`.
"""
from __future__ import annotations

from dataclasses import dataclass

from grader.judge.status import Status


@dataclass(frozen=True, kw_only=True)
class StatusWords:
    """How one status is shown, named field by field (a table of a dozen positional values read wrong)."""

    mark: str           # a terminal's line starts with it
    cell: str           # the class page's mark in a student's row
    colour: str         # a notebook's headline
    csv: int | str      # grades.csv: SUM counts the passes, COUNTBLANK the puzzles nobody tried
    tally: str          # the terminal's closing count: "3 failed"
    group: str          # the class page's share of a puzzle (a key of GROUP_COLOURS)
    junit: str          # junit.xml's element under the testcase; "" for none
    bar: str            # a progress bar's word after the puzzle's id (the watch's status line's, in capitals)
    legend: str         # what the class page's legend says its cell means
    # The headline of a status that has no cases to count, as the terminal and a notebook say it
    # (str.format: head is "<mark> <puzzle> <title>"; title and message escaped for HTML).
    terminal: str = ""
    notebook: str = ""


UNDECIDED_GROUP = "not decided here"
GROUP_COLOURS = {"passed": "#2e7d32", "failed": "#c62828", "not attempted": "#bdbdbd", UNDECIDED_GROUP: "#8d6e63"}

STATUS_WORDS: dict[Status, StatusWords] = {
    Status.PASS: StatusWords(
        mark="✓", cell="✓", colour="#2e7d32", csv=1, tally="passed", group="passed", junit="", bar="pass",
        legend="passed"),
    Status.FAIL: StatusWords(
        mark="✗", cell="✗", colour="#c62828", csv=0, tally="failed", group="failed", junit="failure", bar="fail",
        legend="failed"),
    Status.NOT_ATTEMPTED: StatusWords(
        mark="·", cell="–", colour="#757575", csv="", tally="not attempted", group="not attempted",
        junit="skipped", bar="not attempted", legend="not attempted",
        terminal="{head}: not attempted",
        notebook="{puzzle} {title}: not attempted yet (the kernel is still the stub)"),
    # The three below are neither passed nor failed: grades.csv says why ("n/a": this Triton
    # cannot run the puzzle; "gpu": the interpreter cannot, the kernel compiles; "error").
    Status.UNSUPPORTED: StatusWords(
        mark="–", cell="n/a", colour="#757575", csv="n/a", tally="unsupported", group=UNDECIDED_GROUP,
        junit="skipped", bar="unsupported", legend="this Triton cannot run the puzzle (not a fail)",
        terminal="{head}: unsupported, not a fail\n    {message}",
        notebook="{puzzle} {title}: {message}"),
    Status.INTERPRETER_LIMIT: StatusWords(
        mark="?", cell="gpu", colour="#757575", csv="gpu",
        tally="to grade on a GPU (the interpreter cannot run them)", group=UNDECIDED_GROUP, junit="skipped",
        bar="interpreter limit", legend="to grade on a GPU (the interpreter cannot run it; not a fail)",
        terminal="{head}: not graded here, the interpreter cannot run it (not a fail)\n    {message}",
        notebook="{puzzle} {title}: not graded here (not a fail): {message}"),
    Status.ERROR: StatusWords(
        mark="!", cell="!", colour="#e65100", csv="error", tally="grader error(s)",
        group=UNDECIDED_GROUP, junit="error", bar="error", legend="a grader error (not the student's fault)",
        terminal="{head}: GRADER ERROR (not your fault; please report it)\n    {message}",
        notebook="{puzzle}: grader error (not your fault): {message}"),
}


def status_words(status: Status) -> StatusWords:
    return STATUS_WORDS[status]
