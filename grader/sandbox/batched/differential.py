"""The batched engine checked against the serial interpreter, run by run (``TP_DIFFERENTIAL=1``).

Where it is set, a worker runs every interpreted run twice: batched, as it grades, then with the
serial interpreter on fresh copies of the same inputs. Every buffer must come back the same, bit
for bit, and so must what the runs report: the failure and its words, the overlaps and reads of
unwritten elements the bounds check found, and what the programs printed. A difference is the
engine's bug, raised as the worker's own error (the grader's ``error`` status), naming the run and
the first thing that differs. ``tests/test_engine_agrees.py`` grades the course and its corpora so.
"""
from __future__ import annotations

import os

COMPARED = ("failure", "overlaps", "early_reads", "printed")


class EnginesDisagree(Exception):
    """The batched engine and the serial interpreter gave different results for one run."""


def enabled() -> bool:
    return os.environ.get("TP_DIFFERENTIAL") == "1"


def fresh_warnings() -> None:
    """Forget which warnings were shown, so that each of the two runs prints its own once (Python
    shows a warning once per place; the second run would otherwise print none)."""
    import sys
    import warnings
    for module in list(sys.modules.values()):
        registry = getattr(module, "__warningregistry__", None)
        if isinstance(registry, dict):
            registry.clear()
    warnings.filters[:] = warnings.filters  # invalidates the cached "already shown" decisions
    getattr(warnings, "_filters_mutated", lambda: None)()


def agree(batched: dict, batched_memory, serial: dict, serial_memory, what: str) -> None:
    """Raise EnginesDisagree where two runs of one case differ in a field or a byte."""
    for field in COMPARED:
        if batched.get(field) != serial.get(field):
            raise EnginesDisagree(f"{what}: the batched engine's {field} is {batched.get(field)!r}, "
                                  f"the serial interpreter's {serial.get(field)!r}")
    if batched.get("failure") is not None:  # a failed run's buffers are not judged
        return
    for index, (a, b) in enumerate(zip(batched_memory, serial_memory)):
        mine, theirs = a.cpu().numpy().tobytes(), b.cpu().numpy().tobytes()
        if mine != theirs:
            at = next(i for i, (x, y) in enumerate(zip(mine, theirs)) if x != y)
            raise EnginesDisagree(f"{what}: buffer {index} differs from byte {at} "
                                  f"({sum(x != y for x, y in zip(mine, theirs))} bytes in all)")
