"""The kinds of puzzle, looked up by the name a puzzle file gives (``Puzzle(kind="function")``).

Each kind is a wing here, a package whose ``__init__`` declares one
:class:`~grader.judge.kinds.kind.PuzzleKind` as ``KIND``: its case runner and the checks it lists
beside its cases (the life cycle, :mod:`grader.judge.grade`, runs them), its benchmark plan, whether
it is drawn and shown in the viewer; the wing also holds its own failures' facts and words, and the
static checks only it runs. The rest of the grader asks the kind and never names one
(tests/test_kinds.py).

The worker has a registry of its own, :mod:`grader.sandbox.kinds`: the sandbox must not reach the
runners this one names; the course another, :mod:`grader.course.kinds`, which a puzzle file is
checked against. A new kind is a wing in each, and a line in each registry.
"""
from __future__ import annotations

from grader.course.wings import Wings
from grader.judge.kinds.kind import PuzzleKind

# One line per kind, as grader.course.kinds lists them (the kernel first: the object check() most
# often gets); each wing imported when first asked for.
WINGS = {
    "kernel": "grader.judge.kinds.kernel",
    "function": "grader.judge.kinds.function",
    "helion": "grader.judge.kinds.helion",
}
KINDS: Wings = Wings(WINGS, "KIND")


class UnknownKind(ValueError):
    """A kind no module here describes."""


def named(name: str) -> PuzzleKind:
    """The kind called ``name``; :class:`UnknownKind` where there is none."""
    try:
        return KINDS[name]
    except (KeyError, TypeError):  # TypeError: not even a name (an unhashable value)
        raise UnknownKind(f"no puzzle kind {name!r}: the kinds are {', '.join(map(repr, KINDS))}") from None


def kind_of(puzzle) -> PuzzleKind:
    """The kind of ``puzzle`` (a :class:`grader.course.puzzle.Puzzle`)."""
    return named(puzzle.kind)
