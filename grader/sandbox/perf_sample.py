"""Which programs of a launch ``--perf`` interprets (inside an interpreter worker): a spread
sample of the grid, a few along each axis longer than one, the first and the last included.
The interpreter's grid loop is narrowed as :class:`grader.sandbox.launch.program_order`
reverses it: its ``range`` calls, and only those, return the chosen indices."""
from __future__ import annotations

import builtins
import math
import sys


def spread(count: int, wanted: int) -> list[int]:
    """``wanted`` indices of ``range(count)``, evenly spread, the first and the last included."""
    if wanted >= count:
        return list(range(count))
    return sorted({round(i * (count - 1) / (wanted - 1)) for i in range(wanted)}) if wanted > 1 else [0]


def per_axis(grid: tuple[int, int, int], budget: int) -> tuple[int, int, int]:
    """How many programs to take along each axis: about ``budget`` in all, shared between the
    axes longer than one, so that a causal attention's query blocks are all represented."""
    axes = [g for g in grid if g > 1]
    if not axes:
        return (1, 1, 1)
    each = max(1, math.ceil(budget ** (1 / len(axes))))
    taken = [min(g, each) for g in grid]
    while math.prod(taken) > budget and max(taken) > 1:  # never more than asked
        taken[taken.index(max(taken))] -= 1
    return tuple(max(1, t) for t in taken)


class Sample:
    """The interpreter's grid loop over a sample: its ``range`` calls return the chosen
    indices of their axis (told apart by the loop's line: x, then y, then z)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.module = None
        self.axes: dict[int, int] = {}  # the loop's line -> its axis
        self.chosen: tuple[list[int], ...] = ([0], [0], [0])

    def choose(self, grid: tuple[int, int, int]) -> int:
        taken = per_axis(grid, self.budget)
        self.chosen = tuple(spread(g, t) for g, t in zip(grid, taken))
        self.axes = {}
        return math.prod(len(c) for c in self.chosen)

    def __enter__(self):
        from triton.runtime import interpreter

        from grader.sandbox.sampling import grid_loop
        loop = grid_loop(interpreter)

        def grid_range(*args):
            frame = sys._getframe(1)
            if frame.f_code is not loop or len(args) != 1:
                return builtins.range(*args)
            axis = self.axes.setdefault(frame.f_lineno, len(self.axes))
            return self.chosen[min(axis, 2)] if axis < 3 else builtins.range(*args)
        self.module = interpreter
        interpreter.range = grid_range
        return self

    def __exit__(self, *exc) -> None:
        if self.module is not None:
            del self.module.range
            self.module = None
