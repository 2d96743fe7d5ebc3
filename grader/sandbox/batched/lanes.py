"""Which programs a batched run is running: one lane per program, and the regrouping signals.

Every value of a batched run carries a leading *program axis*: a scalar is ``(P,)`` and a block
of shape ``S`` is ``(P, *S)``, where ``P`` is the number of lanes, or 1 for a value that is the
same in every program (a constant, ``tl.arange``): numpy broadcasts 1 against ``P``, and each
lane's slice is what the serial interpreter holds for that program. The serial interpreter's
own scalars are ``(1,)``, so its values are batched values of one lane already.

The lanes of a group are in the launch's order (``rank``: the position in which the serial
interpreter runs the program), so an operation applied lane after lane, flattened, is applied
in program order: a store's last writer and an atomic's sequence are the serial run's.

A group runs until Python needs one value where its lanes hold several (an ``if`` on a
program's scalar, a loop bound): :class:`Divergence` then splits the group into groups that
agree, and each runs again from the start (the launch's memory rolled back, so nothing is
written twice). :class:`Oversized` halves a group whose arrays pass the budget; :class:`Unbatchable`
sends the launch to the serial interpreter. They derive from BaseException so that neither
Triton's wrapping of a helper's errors nor a kernel's own ``except Exception`` catches them.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

BUDGET = 256 << 20  # bytes: no array of a batched run is larger; a group that would need one is halved


class Regroup(BaseException):
    """The running group cannot go on as one; the engine decides what runs next."""


class Divergence(Regroup):
    """Python asked one value of a scalar whose lanes differ: regroup by ``values``, one per lane."""

    def __init__(self, values: np.ndarray, what: str) -> None:
        super().__init__(what)
        self.values, self.what = values, what


class Oversized(Regroup):
    """An array of ``nbytes`` would pass the budget: run fewer lanes at a time."""

    def __init__(self, nbytes: int) -> None:
        super().__init__(f"an array of {nbytes} bytes")
        self.nbytes = nbytes


class Unbatchable(Regroup):
    """The launch does something the engine does not batch, or cannot batch exactly: the serial
    interpreter runs it, and the run says why (``what``)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass
class Group:
    """The lanes running now: each one's grid index and rank, and how many memory operations
    each has made so far in this run (the same for all: they run the same code)."""

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    ranks: np.ndarray
    launch: int = 0  # which launch of the request this is, for the order of what the checks find
    steps: int = 0
    memory: object = None  # the launch's LaunchMemory (memory.py)
    printed: object = None  # the launch's lines, per rank (printing.py)

    @property
    def size(self) -> int:
        return int(self.ranks.size)

    def take(self, keep: np.ndarray) -> "Group":
        return Group(self.x[keep], self.y[keep], self.z[keep], self.ranks[keep], self.launch, 0, self.memory,
                     self.printed)

    def coords(self, lane: int) -> tuple[int, int, int]:
        return int(self.x[lane]), int(self.y[lane]), int(self.z[lane])

    def step(self) -> int:
        """Counts one memory operation; returns its index in each lane's own sequence."""
        self.steps += 1
        return self.steps - 1


_current: Group | None = None
_launch = 0  # the launch of the request running now, counted by the engine (0 without it)


def current() -> Group | None:
    """The group a batched run is running, or None (the serial interpreter)."""
    return _current


def launch_index() -> int:
    return _launch


def count_launch(index: int) -> None:
    global _launch
    _launch = index


def enter(group: Group | None) -> None:
    global _current
    _current = group


def lead(data: np.ndarray) -> int:
    """The size of a batched value's program axis (1: the same in every lane)."""
    return int(np.shape(data)[0]) if np.ndim(data) else 1


def lanes_of(data: np.ndarray, ndim: int) -> np.ndarray:
    """``data`` with a program axis: a batched value of ``ndim`` block dims is returned as it is;
    a value of the serial interpreter's shape (no program axis) gets one of size 1."""
    data = np.asarray(data)
    return data if data.ndim == ndim + 1 else data.reshape((1,) + data.shape)


def one_value(data: np.ndarray, what: str):
    """The one value of a batched scalar, or Divergence where its lanes differ."""
    data = np.asarray(data)
    if data.size <= 1:
        return data.reshape(-1)[0] if data.size else data
    first = data.reshape(-1)[0]
    same = data == first
    if data.dtype.kind == "f":
        same |= np.isnan(data) & np.isnan(first)
    if bool(np.all(same)):
        return first
    raise Divergence(data.reshape(-1), what)


def budget(shape, itemsize: int) -> None:
    """Oversized where an array of ``shape`` would pass the budget (only while batched: the serial
    interpreter allocates what it allocates)."""
    if _current is not None and _current.size > 1:
        nbytes = int(np.prod(shape, dtype=np.int64)) * itemsize
        if nbytes > BUDGET:
            raise Oversized(nbytes)


def call_stack() -> list[tuple[str, int]]:
    """(file, line) of each frame above the caller's caller, innermost first."""
    found, frame = [], sys._getframe(2)
    while frame is not None:
        found.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return found
