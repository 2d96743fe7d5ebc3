"""Running a sample of a launch's programs (inside a worker), and the GPU's launch limits.

In Triton's interpreter the programs of a launch run one after another in Python, so a case
at the sizes a statement describes costs minutes. A kernel's behaviour at a size depends on
each program's loop counts, offsets and masks, not on how many programs run, so a large case
runs only some of them: along every grid axis the first two and the last (the one holding a
tail), and one or two drawn from the case's seed (a batch's secret changes it). Every store of the
programs that ran is recorded (:class:`grader.sandbox.bounds.WriteLog`); the grader compares
those elements only, and decides from what each program wrote whether the sample stands for
the launch (:mod:`grader.judge.sampled`). The other elements keep the grader's NaN fill, and
a program that loads an output element it did not store itself is reported: on a GPU it would
read what another program writes, in no set order.

The GPU's limits are checked at every interpreted launch, sampled or not: a grid of more than
65535 programs on axis 1 or 2, more than 2**31 - 1 on axis 0, and ``num_warps`` that is not a
power of two or above 32 (1024 threads) are refused, as CUDA or Triton refuses them.
"""
from __future__ import annotations

import builtins
import random
import sys

import numpy as np

from grader.course.limits import refusal
from grader.sandbox.interpreter.hooks import RangePatch

DRAWN = 2  # programs drawn at random along axis 0, beside the first two and the last


class LaunchRefused(Exception):
    """A launch a GPU would refuse; the text names the limit and the fix."""


def chosen(n: int, seed: int, axis: int = 0) -> list[int]:
    """The indices run along one grid axis of ``n`` programs: all of a short axis, else 0, 1,
    the last, and more drawn from ``seed`` (the same for the same axis, length and seed): ``DRAWN``
    along axis 0, one along axes 1 and 2, whose programs multiply axis 0's."""
    drawn = DRAWN if axis == 0 else 1
    if n <= 3 + drawn:
        return list(builtins.range(n))
    draw = random.Random(f"{seed}:{axis}:{n}").sample(builtins.range(2, n - 1), drawn)
    return sorted({0, 1, n - 1, *draw})


def indices(n: int, seed: int, axis: int, axes=None) -> list[int]:
    """The indices run along one axis: ``chosen`` where the axis is among the ``axes`` sampled
    (all of them where None), else every one."""
    return chosen(n, seed, axis) if axes is None or axis in axes else list(builtins.range(n))


def along(grid: tuple[int, ...], seed: int, axes=None) -> list[list[int]]:
    """The indices a sampled launch of ``grid`` runs along each axis."""
    return [indices(int(n), seed, axis, axes) for axis, n in enumerate(grid)]


def planned(grid: tuple[int, ...], seed: int, axes=None) -> int:
    """How many programs a sampled launch of ``grid`` runs."""
    return int(np.prod([len(indices) for indices in along(grid, seed, axes)]))


class sampled_grid(RangePatch):
    """While active, the interpreter's grid loop runs ``chosen`` indices along every axis.

    The loop (``GridExecutor.__call__``) calls ``range`` once per axis; those calls, and only
    those, return the chosen indices. Every launch made while active is counted. ``axes``: the
    grid axes sampled (None: all); along the others every program runs."""

    def __init__(self, seed: int, axes: frozenset[int] | None = None) -> None:
        self.seed, self.axes = seed, axes
        self.launches: list[dict] = []  # {"grid": (x, y, z), "ran": programs run, "along": indices per axis}
        self._frame = None  # the grid loop's frame of the launch counted last
        self._axes: dict[int, int] = {}  # the loop's line -> its axis (x, then y, then z)

    def __enter__(self):
        from triton.runtime import interpreter
        loop = grid_loop(interpreter)
        builder = interpreter.interpreter_builder

        def grid_range(*args):
            frame = sys._getframe(1)
            if frame.f_code is not loop or len(args) != 1:
                return builtins.range(*args)
            if frame is not self._frame:  # the loop's first axis: a new launch
                self._frame = frame
                grid = tuple(int(g) for g in builder.grid_dim)
                self.launches.append({"grid": grid, "ran": planned(grid, self.seed, self.axes),
                                      "along": along(grid, self.seed, self.axes)})
            axis = self._axes.setdefault(frame.f_lineno, len(self._axes))
            return indices(int(args[0]), self.seed, axis, self.axes)
        self._patch(interpreter, grid_range)
        return self

    def __exit__(self, *exc) -> None:
        self._frame = None
        super().__exit__(*exc)

    @property
    def ran(self) -> int:
        return sum(launch["ran"] for launch in self.launches)

    @property
    def programs(self) -> int:
        return sum(int(np.prod(launch["grid"])) for launch in self.launches)


def grid_loop(interpreter):
    """The code of the interpreter's grid loop, below the limits' check that wraps it."""
    call = interpreter.GridExecutor.__call__
    return getattr(call, "__wrapped__", call).__code__


class StoreRecorder:
    """Which elements each program stored, per output: runs of consecutive storage offsets."""

    def __init__(self) -> None:
        self.parts: dict[tuple[int, int], list[np.ndarray]] = {}

    def __call__(self, program: int, region: int, index: np.ndarray) -> None:
        self.parts.setdefault((program, region), []).append(np.asarray(index, dtype=np.int64).copy())

    def writes(self, decode) -> list[dict]:
        """One entry per (program, output): the program's grid index, the output's region
        index, the number of elements and their offsets as (start, length) runs."""
        out = []
        for (program, region), arrays in sorted(self.parts.items()):
            offsets = np.unique(np.concatenate(arrays))
            breaks = np.flatnonzero(np.diff(offsets) != 1) + 1
            starts = offsets[np.concatenate(([0], breaks))]
            lengths = np.diff(np.concatenate(([0], breaks, [offsets.size])))
            runs = np.stack([starts, lengths], axis=1).reshape(-1)
            out.append({"program": list(decode(program)), "buffer": region, "count": int(offsets.size),
                        "runs": [int(v) for v in runs]})
        return out


def check_launch(grid: tuple[int, ...], num_warps=None) -> None:
    """Raise LaunchRefused where a GPU would refuse this launch."""
    why = refusal(grid, None if num_warps is None else int(num_warps))
    if why is not None:
        raise LaunchRefused(why)


def install_limits() -> None:
    """Check every interpreted launch against the GPU's limits, once per process."""
    from triton.runtime import interpreter
    executor = interpreter.GridExecutor
    if getattr(executor.__call__, "checks_limits", False):
        return
    builder = interpreter.interpreter_builder
    original_set, original_call = type(builder).set_grid_dim, executor.__call__

    def set_grid_dim(self, nx, ny, nz):
        check_launch((int(nx), int(ny), int(nz)))
        return original_set(self, nx, ny, nz)

    def call(self, *args, **kwargs):
        check_launch((), kwargs.get("num_warps"))
        return original_call(self, *args, **kwargs)
    call.checks_limits, call.__wrapped__ = True, original_call
    type(builder).set_grid_dim = set_grid_dim
    executor.__call__ = call
