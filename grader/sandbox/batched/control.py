"""Where a kernel's Python asks one value of a scalar: an ``if``, a ``while``, a loop's bounds, an
index, a print. The serial interpreter answers from its one program; a batched run answers where
every lane agrees, and otherwise raises :class:`Divergence`, so that the group splits into groups
that agree and each runs the kernel again with its one answer: the serial interpreter's path,
taken by several programs at once.

Loops get more: lanes whose loop runs the same number of times stay together though its bounds
differ (a row loop from ``pid * ROWS_PER_PROGRAM``). The loop variable is then a scalar of each
lane's own values, typed as the compiled loop types it; where the bounds agree it is the Python
int the serial interpreter gives.

Printing: each lane's lines are kept under its rank and written when the launch ends, in
program order, as the serial interpreter writes them (:mod:`.engine`).
"""
from __future__ import annotations

import builtins

import numpy as np

from grader.sandbox.batched.lanes import Divergence, current, one_value


def index_of(tensor) -> int:
    return int(one_value(tensor.handle.data, "an index or a loop bound that differs between programs"))


def text_of(tensor, show=str) -> str:
    """``str`` (or ``repr``) of a kernel's tensor: the serial interpreter's text of its data, where
    every lane's is the same."""
    data = np.asarray(tensor.handle.data)
    if current() is None:
        return show(data)
    block = tensor.type.is_block()
    texts = [show(data[lane]) if block else show(data[lane:lane + 1]) for lane in builtins.range(data.shape[0])]
    if any(t != texts[0] for t in texts):
        raise Divergence(np.array(texts), "a tensor shown as text from Python, which differs between programs")
    return texts[0]


def _bounds(arg1, arg2, step):
    start, end = (0, arg1) if arg2 is None else (arg1, arg2)
    return start, end, 1 if step is None else step


def _lane_values(value) -> np.ndarray:
    data = getattr(getattr(value, "handle", None), "data", None)
    return np.asarray(value if data is None else data).astype(np.int64).reshape(-1)


def _trips(start, end, step) -> np.ndarray:
    up = np.maximum(0, -((start - end) // np.maximum(step, 1)))
    down = np.maximum(0, -((end - start) // np.maximum(-step, 1)))
    return np.where(step > 0, up, down)


serial_range = builtins.range  # what a loop is outside a batched run: --perf samples long loops through it


def loop_range(arg1, arg2=None, step=None, **options):
    """``range`` and ``tl.range`` in a kernel. Outside a batched run, ``serial_range`` (Python's
    ``range``, over ``__index__``, as the serial interpreter has it); with bounds every lane agrees
    on, Python's ``range``."""
    start, end, step = _bounds(arg1, arg2, step)
    tensors = [v for v in (start, end, step) if hasattr(v, "handle")]
    if current() is None:
        return serial_range(start, end, step)
    if not tensors:
        return builtins.range(start, end, step)
    starts, ends, steps = (_lane_values(v) for v in (start, end, step))
    if starts.size == ends.size == steps.size == 1 or (
            np.all(starts == starts[0]) and np.all(ends == ends[0]) and np.all(steps == steps[0])):
        return builtins.range(int(starts[0]), int(ends[0]), int(steps[0]))
    if np.any(steps == 0):
        raise ValueError("range() arg 3 must not be zero")
    trips = _trips(*np.broadcast_arrays(starts, ends, steps))
    if np.any(trips != trips[0]):
        raise Divergence(trips, "a loop whose trip count differs between programs")
    if np.all(starts == starts[0]) and np.all(steps == steps[0]):  # ends differ, trips agree
        return builtins.range(int(starts[0]), int(starts[0]) + int(trips[0]) * int(steps[0]), int(steps[0]))
    return _lane_loop(tensors, starts, steps, int(trips[0]))


def _lane_loop(bounds, starts, steps, trips: int):
    """The loop variable of each lane, iteration by iteration: int32, as Triton types a loop over
    int32 bounds, or int64 where a bound is or a value needs it."""
    import triton.language as tl
    from triton.runtime import interpreter
    last = starts + (trips - 1) * steps
    wide = trips and (np.abs(starts).max() >= 2 ** 31 or np.abs(last).max() >= 2 ** 31)
    wide = wide or any(getattr(b, "dtype", None) in (tl.int64, tl.uint64) for b in bounds)
    dtype, np_dtype = (tl.int64, np.int64) if wide else (tl.int32, np.int32)
    for k in builtins.range(trips):
        values = (starts + k * steps).astype(np_dtype)
        yield tl.tensor(interpreter.TensorHandle(values, dtype), dtype)


def kernel_print(*args, sep=" ", end="\n", file=None, flush=False):
    """``print`` in a kernel: in a batched run, each lane's line kept for the launch's end."""
    group = current()
    if group is None or file is not None:
        return builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
    sep, end = " " if sep is None else sep, "\n" if end is None else end
    lines = [sep.join(_lane_text(a, lane) for a in args) + end for lane in builtins.range(group.size)]
    group.printed.add(group.ranks, lines)


def _lane_text(value, lane: int) -> str:
    data = getattr(getattr(value, "handle", None), "data", None)
    if data is None or not hasattr(value, "type"):
        return str(value)
    data = np.asarray(data)
    row = data[lane if data.shape[0] > 1 else 0]
    return str(row) if value.type.is_block() else str(data[lane:lane + 1] if data.shape[0] > 1 else data[:1])


class Printed:
    """The lines of a launch's programs, per rank, until the launch ends."""

    def __init__(self) -> None:
        self.lines: dict[int, list[str]] = {}

    def add(self, ranks, lines) -> None:
        for rank, line in zip(ranks.tolist(), lines):
            self.lines.setdefault(rank, []).append(line)

    def forget(self, ranks) -> None:
        for rank in ranks.tolist():
            self.lines.pop(rank, None)

    def write(self, upto: int | None = None) -> None:
        import sys
        for rank in sorted(self.lines):
            if upto is None or rank <= upto:
                sys.stdout.write("".join(self.lines[rank]))
        self.lines.clear()


def install(interpreter) -> None:
    """``tl.device_print`` and ``tl.device_assert`` of a batched run, lane by lane."""
    builder = interpreter.InterpreterBuilder
    serial_print, serial_assert = builder.create_print, builder.create_assert

    def create_print(self, prefix, hex, values, *rest):
        group = current()
        if group is None:
            return serial_print(self, prefix, hex, values, *rest)
        if hex:
            np.set_printoptions(formatter={"all": lambda x: f"0x{x:02x}"})
        try:
            lines = []
            for lane in builtins.range(group.size):
                head = f"({group.x[lane]}, {group.y[lane]}, {group.z[lane]})" + (f" {prefix}" if prefix else "")
                lines.append("".join(f"{head} {_lane_data(v.data, lane)}\n" for v in values))
        finally:
            if hex:
                np.set_printoptions(formatter=None)
        group.printed.add(group.ranks, lines)

    def create_assert(self, condition, message, *rest):
        group = current()
        if group is None:
            return serial_assert(self, condition, message, *rest)
        data = np.asarray(condition.data)
        held = data.reshape(data.shape[0], -1).all(axis=1) if data.ndim else np.array([bool(data)])
        if not held.all():
            failed = AssertionError(f"{message}")
            failed.batched_rank = int(np.broadcast_to(group.ranks, held.shape)[~held].min())
            raise failed

    builder.create_print, builder.create_assert = create_print, create_assert


def _lane_data(data, lane: int):
    data = np.asarray(data)
    lane = lane if data.shape[0] > 1 else 0
    return data[lane:lane + 1] if data.ndim == 1 else data[lane]
