"""Walking an exception's chain: Triton raises some errors ``from None`` and wraps a kernel's in
``InterpreterError``, so what a worker reports is often several links behind what it caught.
Imports nothing, so that the interpreter's limits can use it below everything else."""
from __future__ import annotations


def errors_behind(exc: BaseException | None):
    """``exc`` and the errors behind it, outermost first: each one's cause, or else its context."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__
