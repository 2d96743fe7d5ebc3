"""The worker's side of each kind of puzzle: how a learner's object is loaded and benchmarked,
which kernel a failure's compile error is read from, the requests only that kind sends and what
its zygote warms. Each kind's wing here (``kinds/<kind>/``) declares its
:class:`~grader.sandbox.kinds.kind.WorkerKind` as ``KIND``. The grader's side is
:mod:`grader.judge.kinds`, which this registry must not import (it names the graders).

A Load names the file and the object, not the puzzle's kind: the object says which kind's it
is (a class is an autograd Function's). A Bench names the puzzle file, whose kind is looked up.
A kind whose cases need requests of their own (an autograd puzzle's record and replay, a Helion
case) answers them in its wing: the worker routes them by ``answers``.
"""
from __future__ import annotations

from grader.course.wings import Wings
from grader.sandbox.kinds.kind import WorkerKind
from grader.sandbox.warmup import WarmStep

# One line per kind, as grader.course.kinds lists them; each wing imported when first asked for.
WINGS = {
    "kernel": "grader.sandbox.kinds.kernel",
    "function": "grader.sandbox.kinds.function",
    "helion": "grader.sandbox.kinds.helion",
}
KINDS: Wings = Wings(WINGS, "KIND")


def warm_steps() -> tuple[WarmStep, ...]:
    """Every kind's warm-up steps (grader.sandbox.warmup runs them in the zygote)."""
    return tuple(step for kind in KINDS.values() for step in kind.warm)


def for_object(obj) -> WorkerKind:
    """The kind whose object ``obj`` is (a learner's ``kernel`` as its file defines it)."""
    return next((kind for kind in KINDS.values() if kind.owns is not None and kind.owns(obj)),
                next(kind for kind in KINDS.values() if kind.owns is None))


def named(name: str) -> WorkerKind:
    """The kind a puzzle file names; a clear error where the worker knows none of that name."""
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"the worker knows no puzzle kind {name!r}: it knows {', '.join(map(repr, KINDS))}") \
            from None
