"""The puzzle kinds, as the course and the reading of a learner's text know them: each kind's wing
here (``<kind>.py``) declares its :class:`~grader.course.kinds.kind.KindSpec` as ``SPEC``, by the
name a puzzle file gives (``Puzzle(kind="function")``).

The grader's side of a kind is its wing in :mod:`grader.judge.kinds`, the worker's in
:mod:`grader.sandbox.kinds` (its messages in :mod:`grader.channel.kinds`); tests/test_kinds.py holds
the registries to the same names, and every other module of the grader to naming none.
"""
from __future__ import annotations

from grader.course.kinds.kind import Decorator, KindSpec  # noqa: F401 (what a wing and a reader name)
from grader.course.tracks import COURSE_TRACKS, Track
from grader.course.wings import Wings

# One line per kind, in the order every list of them keeps: a kernel first, the kind most puzzles are
# (and a puzzle's kind where its file names none).
WINGS = {
    "kernel": "grader.course.kinds.kernel",
    "function": "grader.course.kinds.function",
    "helion": "grader.course.kinds.helion",
}
SPECS: Wings = Wings(WINGS, "SPEC")


def default() -> str:
    """The kind of a puzzle whose file names none: the first listed."""
    return next(iter(WINGS))


def packages() -> dict[str, str]:
    """The packages only some kinds need, each with the command that adds it."""
    return {s.package: s.install or "" for s in SPECS.values() if s.package}


def decorators() -> tuple[Decorator, ...]:
    return tuple(s.decorator for s in SPECS.values() if s.decorator is not None)


def stand_ins() -> tuple[str, ...]:
    """The modules stood in for while a course file is read for its PUZZLE, every kind's."""
    return tuple(module for s in SPECS.values() for module in s.stand_ins)


def package_warm_steps() -> dict[str, str]:
    """The warm-up step a file asks for by importing a kind's package: package -> step."""
    return {s.package: s.warm for s in SPECS.values() if s.package and s.warm}


def env_prefixes() -> tuple[str, ...]:
    """The prefixes of the environment variables the kinds' packages read (``HELION_``)."""
    return tuple(s.env_prefix for s in SPECS.values() if s.env_prefix)


def tracks() -> tuple[Track, ...]:
    """The course's tracks and those of the kinds that make their own, in the course's order: the one
    table that a puzzle's track is checked against and the notebooks are built from."""
    return tuple(sorted((*COURSE_TRACKS, *(s.track for s in SPECS.values() if s.track)), key=lambda t: t.order))
