"""The kinds of puzzle, looked up by the name a puzzle file gives (``Puzzle(kind="function")``).

Each kind is a package of this one whose ``__init__`` holds one
:class:`~grader.judge.kinds.kind.PuzzleKind`: its case runner and the checks it lists beside its
cases (the life cycle, :mod:`grader.judge.grade`, runs them), its benchmark plan, whether it is
drawn and shown in the viewer. The rest of the grader asks the kind and never compares a
puzzle's kind to a name (tests/test_kinds.py).

The worker has a registry of its own, :mod:`grader.sandbox.kinds`: the sandbox must not reach
the runners this one names. A new kind is a package here, an entry there, and its name in
:data:`grader.course.puzzle.KINDS`, which a puzzle file is checked against.
"""
from __future__ import annotations

from grader.judge.kinds import function, helion, kernel
from grader.judge.kinds.kind import PuzzleKind

# By name, in the order every kind is listed (the kernel first: the object check() most often gets).
KINDS: dict[str, PuzzleKind] = {kind.name: kind for kind in (kernel.KIND, function.KIND, helion.KIND)}


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
