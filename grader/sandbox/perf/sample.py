"""What of a launch ``--perf`` interprets (inside an interpreter worker): a spread sample of the
grid's programs, a few along each axis longer than one, the first and the last included, and
of each long loop a spread sample of its iterations.

The interpreter's grid loop is narrowed as :class:`grader.sandbox.launch.program_order`
reverses it: its ``range`` calls, and only those, return the chosen indices. The programs are
run in an order that spreads them at every prefix (the ends, then the middle...), so that a
launch whose programs are slow to interpret stops after the time budget with a spread sample,
smaller than asked; the judge scales what ran to the grid and says so.

A kernel's loop longer than :data:`LONG` iterations (``range``, ``tl.range``) runs its first
:data:`FIRST` iterations and :data:`RUN` in its middle and at its end; each stands for the
skipped ones (:attr:`grader.sandbox.perf.record.LaunchCounts.weight`). Loops of programs do
the same work on other data in nearly every kernel, as programs do: a matmul's K loop, a
scan's chunks. Skipping iterations changes the values computed, never what is counted per
iteration; the run's outputs are thrown away.
"""
from __future__ import annotations

import builtins
import math
import sys
import time

from grader.sandbox.interpreter.hooks import RangePatch

LONG = 24     # iterations: a loop this long or shorter runs whole
FIRST = 16    # a longer loop runs its first this many iterations (whose new sectors tell its rate)...
RUN = 4       # ...then this many in its middle and at its end


def spread(count: int, wanted: int) -> list[int]:
    """``wanted`` indices of ``range(count)``, evenly spread, the first and the last included."""
    if wanted >= count:
        return list(range(count))
    return sorted({round(i * (count - 1) / (wanted - 1)) for i in range(wanted)}) if wanted > 1 else [0]


def runs(count: int) -> list[int]:
    """The iterations of a long loop that run: its first :data:`FIRST`, then :data:`RUN` in its
    middle and :data:`RUN` at its end, runs of neighbours."""
    middle = count // 2 - RUN // 2
    return sorted({*range(FIRST), *range(middle, middle + RUN), *range(count - RUN, count)})


def spread_order(values: list) -> list:
    """``values`` reordered so that every prefix is spread over them: the first, the last, then
    the middles of the gaps, halving."""
    if len(values) <= 2:
        return list(values)
    order, seen, gaps = [0, len(values) - 1], {0, len(values) - 1}, [(0, len(values) - 1)]
    while gaps:
        next_gaps = []
        for low, high in gaps:
            middle = (low + high) // 2
            if middle not in seen:
                seen.add(middle)
                order.append(middle)
            if middle - low > 1:
                next_gaps.append((low, middle))
            if high - middle > 1:
                next_gaps.append((middle, high))
        gaps = next_gaps
    return [values[i] for i in order]


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


class Sample(RangePatch):
    """The interpreter's grid loop over a sample, and the kernel's long loops over a sample of
    their iterations: the ``range`` calls of the grid loop return the chosen indices of their
    axis (told apart by the loop's line: x, then y, then z); those of the kernel's code (its
    module's ``range``, and ``tl.range`` through the interpreter's) a sampled loop."""

    def __init__(self, budget: int, seconds: float = 0.0) -> None:
        self.budget = budget
        self.seconds = seconds
        self.module = None
        self.kernel_globals: dict | None = None
        self.counts = None      # the LaunchCounts whose weight a sampled loop sets
        self.axes: dict[int, int] = {}  # the loop's line -> its axis
        self.chosen: tuple[list[int], ...] = ([0], [0], [0])
        self.planned = 0
        self.ran_x = 0          # values of the outermost axis the grid loop reached
        self.started = 0.0

    def choose(self, grid: tuple[int, int, int]) -> int:
        taken = per_axis(grid, self.budget)
        self.chosen = tuple(spread(g, t) for g, t in zip(grid, taken))
        self.axes = {}
        self.planned = math.prod(len(c) for c in self.chosen)
        self.ran_x = 0
        self.started = time.process_time()
        return self.planned

    @property
    def interpreted(self) -> int:
        return self.ran_x * len(self.chosen[1]) * len(self.chosen[2])

    def _outer(self):
        for i, x in enumerate(spread_order(self.chosen[0])):
            # at least two programs; then only while the budget lasts (CPU time: a loaded machine
            # interprets as many programs as an idle one)
            if i >= 2 and self.seconds and time.process_time() - self.started > self.seconds:
                return
            self.ran_x += 1
            yield x

    def loop(self, *args):
        """A kernel's ``range``: the whole loop if short, else a spread sample of it, weighted."""
        whole = builtins.range(*args)
        counts = self.counts
        if counts is None or len(whole) <= LONG:
            return whole
        return self._weighted(whole, runs(len(whole)), counts)

    @staticmethod
    def _weighted(whole, picked: list[int], counts):
        """The picked iterations of ``whole``, each weighing for the skipped ones. What is new to
        the program is told by the first :data:`FIRST` alone, which no skipped iteration
        precedes: their new sectors, and their requests that brought some, stand for the loop's
        (a column walk brings new sectors every eighth column). The later runs' would not: an
        index computed from the loop's counter jumps to far columns there, a pointer advanced
        each step goes on from where the first run left it."""
        weight = len(whole) / len(picked)
        outer, outer_new = counts.weight, counts.new_weight
        counts.weight = outer * weight
        counts.loops_sampled += 1
        try:
            for n, i in enumerate(picked):
                counts.new_weight = outer_new * (len(whole) / FIRST if n < FIRST else 0.0)
                yield whole[i]
        finally:
            counts.weight, counts.new_weight = outer, outer_new

    def __enter__(self):
        from triton.runtime import interpreter

        from grader.sandbox.interpreter.hooks import grid_loop
        loop = grid_loop(interpreter)

        def grid_range(*args):
            frame = sys._getframe(1)
            if frame.f_code is not loop or len(args) != 1:
                if frame.f_code.co_name == "_new_range" and frame.f_code.co_filename == interpreter.__file__:
                    return self.loop(*args)  # tl.range and tl.static_range in a kernel
                return builtins.range(*args)
            axis = self.axes.setdefault(frame.f_lineno, len(self.axes))
            if axis == 0:
                return self._outer()
            return self.chosen[min(axis, 2)] if axis < 3 else builtins.range(*args)
        self._patch(interpreter, grid_range)
        from grader.sandbox.batched import control
        control.serial_range = self.loop  # a kernel's `range` and `tl.range`, where the batched engine is installed
        return self

    def __exit__(self, *exc) -> None:
        from grader.sandbox.batched import control
        control.serial_range = builtins.range
        super().__exit__(*exc)

    def kernel_loops(self, fn_globals: dict):
        """While a launch of the kernel whose globals these are runs, its ``range`` is sampled."""
        return _KernelRange(self, fn_globals)


class _KernelRange:
    def __init__(self, sample: Sample, fn_globals: dict) -> None:
        self.sample, self.globals, self.had = sample, fn_globals, "range" in fn_globals

    def __enter__(self):
        if not self.had:  # a module that defines its own ``range`` keeps it
            self.globals["range"] = self.sample.loop
        return self

    def __exit__(self, *exc) -> None:
        if not self.had:
            self.globals.pop("range", None)
