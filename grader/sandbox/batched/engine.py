"""Running every program of a launch together, in groups that take one path through the kernel.

The interpreter's grid loop runs one program after another. While :class:`Batched` is active,
its first ``range`` call (the loop over grid axis 0) runs the whole launch here instead and
returns no programs for the loop to run. The launch starts as one group of every program, in
the order the serial loop runs them (reversed, for the race check's second run). A group runs
the kernel once, each operation for all its lanes (:mod:`.lanes`), until:

* it ends: its stores stay, its lines are kept for the end;
* its lanes disagree on a branch (:class:`Divergence`): its memory is undone and it becomes one
  group per answer, each run from the start, the lowest-ranked first;
* an array would pass the budget (:class:`Oversized`): undone, and halved;
* it raises: undone, and where the error names no lane, halved until one program raises alone.
  The lowest-ranked program that raises is the serial run's failure, and no program after it
  counts, as the serial run never reaches them;
* it does something not batched, or its programs met out of the serial order
  (:class:`Unbatchable`): the whole launch is undone and runs in the serial interpreter, and
  the launch's record says why. Where they met at a plain load and store with no atomic in the
  launch (:class:`Crossed`: a race on a GPU whatever the order), a run without the bounds check
  (``fail_fast``: a large case's first run) stops there instead: :class:`ProgramsCrossed`.

Lines printed by the programs are written at the launch's end, program after program.
"""
from __future__ import annotations

import builtins
import sys
from dataclasses import dataclass, field

import numpy as np

from grader.sandbox.batched import differential, lanes
from grader.sandbox.batched.control import Printed
from grader.sandbox.batched.lanes import Divergence, Group, Oversized, Regroup, Unbatchable
from grader.sandbox.batched.memory import Conflict, Crossed, LaunchMemory
from grader.sandbox.error_chain import errors_behind
from grader.sandbox.interpreter.hooks import RangePatch, grid_loop


@dataclass
class Launch:
    """What one launch did: its programs, how many group runs they took, and why it ran serially."""

    grid: tuple[int, int, int]
    programs: int
    runs: int = 0
    serial: str | None = None  # None: batched
    crossed: bool = False  # programs read or wrote each other's elements (not atomically)
    raced: bool = False  # stopped there as ProgramsCrossed: a finding the serial interpreter cannot make

    def launch_label(self) -> str:
        return "x".join(str(g) for g in self.grid)


@dataclass
class Batched(RangePatch):
    """While active, the interpreter's launches run batched. ``reverse``: the programs in reverse
    order (the race check's run). ``readonly``: address ranges no program may store into (the
    case's inputs), whose reads need no record. ``launches`` records each launch run meanwhile."""

    reverse: bool = False
    readonly: list = field(default_factory=list)
    launches: list = field(default_factory=list)
    findings: object = None  # what the bounds check found so far: compared under TP_DIFFERENTIAL
    fail_fast: bool = False  # a race of plain accesses ends the launch, not a serial run
    names: object = None  # address -> (tensor, shape, element index), for a race's words
    lines: object = None  # a stack of (file, line) -> the learner's (line, source) in it, for a race's words

    def __enter__(self):
        from triton.runtime import interpreter
        loop = grid_loop(interpreter)

        def grid_range(*args):
            frame = sys._getframe(1)
            if frame.f_code is not loop:
                return builtins.range(*args)
            run_launch(self, frame.f_locals)
            return builtins.range(0)
        self._patch(interpreter, grid_range)
        return self

    @property
    def serial(self) -> list[Launch]:
        return [launch for launch in self.launches if launch.serial is not None]


def _regions(values) -> list[tuple[int, int, int]]:
    """(start, bytes, element size) of the storage of every tensor among a launch's arguments."""
    found: dict[int, tuple[int, int, int]] = {}

    def visit(value):
        if isinstance(value, (tuple, list)):
            for v in value:
                visit(v)
            return
        value = getattr(value, "base", value) if not hasattr(value, "untyped_storage") else value
        if hasattr(value, "untyped_storage"):
            storage = value.untyped_storage()
            start, size = storage.data_ptr(), storage.nbytes()
            grain = min(value.element_size(), found.get(start, (0, 0, 1 << 30))[2])
            found[start] = (start, size, grain)
    visit(list(values))
    return list(found.values())


def run_launch(engine: Batched, frame: dict) -> None:
    """Run the launch whose grid loop's locals are ``frame`` (``self``, ``args``, ``grid``)."""
    from triton.runtime import interpreter
    executor, args, grid = frame["self"], frame["args"], tuple(int(g) for g in frame["grid"])
    host = [*frame.get("args_hst", ()), *dict(frame.get("kwargs_hst", {})).values()]
    gy, gz = grid[1], grid[2]
    count = grid[0] * gy * gz
    order = np.arange(count, dtype=np.int64)[::-1] if engine.reverse else np.arange(count, dtype=np.int64)
    record = Launch(grid, count)
    engine.launches.append(record)
    lanes.count_launch(len(engine.launches) - 1)
    memory = LaunchMemory(_regions(host), engine.readonly)
    printed = Printed()
    root = Group(order // (gy * gz), (order // gz) % gy, order % gz, np.arange(count, dtype=np.int64),
                 len(engine.launches) - 1, 0, memory, printed)
    builder = interpreter.interpreter_builder
    run = lambda: _batched(executor.fn, args, root, memory, printed, record, builder,  # noqa: E731
                           engine.fail_fast and engine)
    if differential.enabled():
        # A launch that went serial, or stopped at a race the engine alone can see, has nothing to compare.
        differential.launch(run, lambda: record.serial is not None or record.raced, count,
                            lambda: _serially(executor.fn, args, root, builder),
                            lambda: memory.rollback(0), _regions(host), engine.findings,
                            f"the launch of grid {record.launch_label()}")
        return
    run()


def _batched(fn, args, root: Group, memory: LaunchMemory, printed: Printed, record: Launch, builder,
             fast: "Batched | None" = None) -> None:
    """The launch's programs in groups, or serially where the engine cannot order them as the serial
    interpreter does; their lines printed, and the first failure raised, at the end. With ``fast``
    (the engine), a race of plain accesses is raised as ProgramsCrossed instead."""
    try:
        failed = _groups(fn, args, root, memory, printed, record)
        memory.settle()
        record.crossed = memory.crossed
    except Crossed as crossed:
        memory.rollback(0)
        record.crossed = True
        if not fast:
            record.serial = crossed.what
            _serially(fn, args, root, builder)
            return
        record.raced = True
        raise ProgramsCrossed(_crossing(crossed, root, fast.names, fast.lines)) from None
    except Unbatchable as refused:
        memory.rollback(0)
        record.serial, record.crossed = refused.what, isinstance(refused, Conflict)
        _serially(fn, args, root, builder)
        return
    if failed is not None:
        printed.write(upto=failed[0])
        raise failed[1]
    printed.write()


def _groups(fn, args, root: Group, memory: LaunchMemory, printed: Printed, record: Launch):
    """Run ``root``'s programs in groups; (rank, exception) of the first program that raised, or None."""
    pending, failed = [root], None
    while pending:
        group = pending.pop(0)
        if failed is not None:
            group = group.take(group.ranks < failed[0])
            if group.size == 0:
                continue
        mark = memory.mark()
        record.runs += 1
        group.steps = 0
        lanes.enter(group)
        try:
            fn(**args)
        except Divergence as split:
            memory.rollback(mark)
            printed.forget(group.ranks)
            pending[0:0] = _split(group, split.values)
        except Oversized:
            memory.rollback(mark)
            printed.forget(group.ranks)
            pending[0:0] = _halves(group)
        except Regroup:
            raise
        except BaseException as exc:  # the kernel's error, raised by the lowest-ranked program that makes it
            memory.rollback(mark)
            rank = next((link.batched_rank for link in errors_behind(exc) if hasattr(link, "batched_rank")), None)
            if rank is None and group.size > 1:
                printed.forget(group.ranks)
                pending[0:0] = _halves(group)
                continue
            rank = int(group.ranks[0]) if rank is None else int(rank)
            printed.forget(group.ranks[group.ranks != rank])
            if failed is None or rank < failed[0]:
                failed = (rank, exc)
            lower = group.take(group.ranks < rank)
            if lower.size:
                pending.insert(0, lower)
        finally:
            lanes.enter(None)
    return failed


class ProgramsCrossed(Exception):
    """A race the batch found: ``crossing`` says where, as the wire's Crossing has it."""

    def __init__(self, crossing: dict) -> None:
        super().__init__(f"programs {crossing['program']} and {crossing['other']} met at {crossing['tensor']}")
        self.crossing = crossing


def _crossing(crossed: Crossed, root: Group, names, lines) -> dict:
    tensor, shape, index = names(crossed.address) if names is not None else \
        (f"the memory at {crossed.address:#x}", (), 0)
    line, source = lines(crossed.stack) if lines is not None else (None, "")
    return {"tensor": tensor, "shape": list(shape), "index": int(index), "program": list(root.coords(crossed.rank)),
            "other": list(root.coords(crossed.other)), "loaded": crossed.loaded, "line": line, "source": source}


def _split(group: Group, values: np.ndarray) -> list[Group]:
    """One group per value the lanes gave, in the order of their lowest rank."""
    _, first, which = np.unique(values, return_index=True, return_inverse=True)
    return [group.take(which.reshape(-1) == k) for k in np.argsort(first, kind="stable")]


def _halves(group: Group) -> list[Group]:
    half = group.size // 2
    keep = np.arange(group.size) < half
    return [group.take(keep), group.take(~keep)]


def _serially(fn, args, root: Group, builder) -> None:
    """The serial interpreter's loop over ``root``'s programs, in its order."""
    for lane in range(root.size):
        builder.set_grid_idx(*root.coords(lane))
        fn(**args)
