"""Memory: a load or store out of bounds, an input written."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from grader.judge.failures.catalogue import FailureKind, register
from grader.judge.failures.words import fmt_index, plural

FOUND_BESIDE = (" (Found by the bounds check that runs each case in the interpreter beside the GPU: on a GPU "
                "this access reads whatever lies past the tensor, or faults, and here its value went unused.)")


RAISED_BESIDE = (" (Found by the run of each case in the interpreter beside the GPU, which the grader's CPU run "
                 "fails the same way: one verdict on every machine.)")


@dataclass(frozen=True)
class StrayStore:
    """Stores past an output's or input's end (or before its start), found in its guard region."""

    kind: ClassVar = FailureKind.OUT_OF_BOUNDS
    name: str
    role: str  # "input" or "output"
    shape: tuple[int, ...]
    numel: int
    count: int  # stray elements
    after: tuple[int, int] | None = None   # first and last element written past the end
    before: tuple[int, int] | None = None  # ... and before the start


def _stray_store(f: StrayStore) -> str:
    parts = []
    if f.after is not None:
        first, last = f.after
        parts.append(f"elements {first}..{last} past its end" if last > first else f"element {first} past its end")
    if f.before is not None:
        first, last = f.before
        parts.append(f"elements {first}..{last} before its start" if last > first
                     else f"element {first} before its start")
    what = "output" if f.role == "output" else "input"
    return (f"out-of-bounds store: the kernel wrote {' and '.join(parts)} of {what} `{f.name}` "
            f"(shape {tuple(f.shape)}, {plural(f.numel, 'element')}; {plural(f.count, 'stray element')}). "
            f"Fix: mask the store, e.g. `tl.store({f.name}_ptr + offs, value, mask=offs < N0)`, "
            f"so that lanes past the end are switched off.")


@dataclass(frozen=True)
class InputModified:
    kind: ClassVar = FailureKind.INPUT_MODIFIED
    name: str
    count: int
    first: tuple[int, ...]


def _input_modified(f: InputModified) -> str:
    return (f"the kernel wrote into input `{f.name}`: {f.count} element(s) changed, "
            f"first at {fmt_index(f.first)}. Inputs are read-only: store only to the output pointer.")


register(FailureKind.OUT_OF_BOUNDS, {StrayStore: _stray_store})
register(FailureKind.INPUT_MODIFIED, {InputModified: _input_modified})
