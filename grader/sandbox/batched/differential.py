"""The batched engine checked against the serial interpreter, launch by launch (``TP_DIFFERENTIAL``).

Where it is set, every interpreted launch runs twice: batched, as it grades, then, with the first
run undone (its stores and the checks' records, from the launch's undo log), serially. Both must
leave the same memory, byte for byte, in every tensor the launch was given, print the same lines,
raise the same error and leave the same findings of the bounds check (overlapping stores, reads of
nothing yet). A difference is the engine's bug, raised as :class:`EnginesDisagree`, which the
worker reports as its own error (the grader's ``error`` status), naming the launch and the first
thing that differs. A launch the engine ran serially itself has nothing to compare.

``TP_DIFFERENTIAL=all`` compares every launch; a number compares the launches of at most
:data:`SERIAL_PROGRAMS` programs whose batched run took at most that many seconds. The serial run
costs per program, where the batched one barely does: a large case's 65,600-program launch that
the engine runs in a second takes minutes serially (puzzle 22's, 240 s in all on Triton 3.9), past
any case's CPU limit, so a number would otherwise turn a verdict into "not graded here". CI grades
every solution with ``all`` and ``--timeout 600``, large cases included, and the wrong-kernel corpus
(``selftest``) with ``0.5`` (docs/batched-engine.md, "Checked against the serial interpreter").
A race the engine stops at is its own finding, which the serial interpreter cannot make: such a
launch, like one the engine ran serially itself, has nothing to compare.
"""
from __future__ import annotations

import contextlib
import ctypes
import io
import os
import time


class EnginesDisagree(Exception):
    """The batched engine and the serial interpreter gave different results for one launch."""


def enabled() -> bool:
    return bool(os.environ.get("TP_DIFFERENTIAL"))


SERIAL_PROGRAMS = 4096  # the most programs a numeric setting runs serially again


def compares(seconds: float, programs: int) -> bool:
    """Whether a launch of ``programs`` whose batched run took ``seconds`` is run again serially
    and compared."""
    setting = os.environ.get("TP_DIFFERENTIAL", "")
    if setting == "all":
        return True
    try:
        return seconds <= float(setting) and programs <= SERIAL_PROGRAMS
    except ValueError:
        return False


def _memory(regions) -> list[bytes]:
    return [ctypes.string_at(start, size) for start, size, _ in regions]


def _outcome(run, regions, findings) -> dict:
    """Run ``run``: what it left in memory, printed and raised, and the findings after it."""
    printed, raised = io.StringIO(), None
    try:
        with contextlib.redirect_stdout(printed):
            run()
    except Exception as exc:  # noqa: BLE001 (the kernel's error is part of the outcome)
        raised = exc
    return {"memory": _memory(regions), "printed": printed.getvalue(), "raised": raised,
            "error": None if raised is None else f"{type(raised).__name__}: {raised}",
            "findings": findings() if findings is not None else None}


def launch(batched, went_serial, programs: int, serial, undo, regions, findings, what: str) -> None:
    """Run the launch batched, then undone and serially, and compare: raises the runs' error, or
    EnginesDisagree. Where the batched run went serial itself (``went_serial()``), its outcome
    stands, with nothing to compare."""
    started = time.perf_counter()
    first = _outcome(batched, regions, findings)
    if went_serial() or not compares(time.perf_counter() - started, programs):
        _finish(first)
        return
    undo()
    second = _outcome(serial, regions, findings)
    for field in ("error", "printed", "findings"):
        if first[field] != second[field]:
            raise EnginesDisagree(f"{what}: the batched engine's {field} is {first[field]!r}, the serial "
                                  f"interpreter's {second[field]!r}")
    if second["raised"] is None:
        for index, (mine, theirs) in enumerate(zip(first["memory"], second["memory"])):
            if mine != theirs:
                at = next(i for i, (x, y) in enumerate(zip(mine, theirs)) if x != y)
                raise EnginesDisagree(f"{what}: tensor {index} of the launch differs from byte {at} "
                                      f"({sum(x != y for x, y in zip(mine, theirs))} bytes in all)")
    _finish(second)


def _finish(outcome: dict) -> None:
    """The run's lines printed and its error raised, as if it had run alone."""
    import sys
    sys.stdout.write(outcome["printed"])
    if outcome["raised"] is not None:
        raise outcome["raised"]
