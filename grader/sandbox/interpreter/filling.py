"""What inline PTX would compute, stood in for by an unknown function, twice.

The interpreter cannot run ``tl.inline_asm_elementwise``. A kernel whose outputs do not depend
on what the assembly computes (``asm(x) * 0``, a result never stored) can still be graded on its
values: the worker runs the case with the assembly replaced by a stand-in, a pure elementwise
function of its operands drawn from a seed, then again under another seed. Where every buffer
comes back bit for bit the same, the outputs do not depend on the assembly and the first run's
values are graded; where they differ, or a run failed (a stand-in value may have sent an access
astray), the case is the interpreter's limit, as before.

Each stand-in value is a hash of the seed and the operands' bits at that element, so the same
operands give the same value whatever order the programs run in (the race check's reversed
run sees the same function), as a pure instruction would. Floats have a random sign and a
magnitude from 2^-20 to 2^20; integers take all their bits. Outside :func:`standing_in` the
assembly raises InterpreterLimit, as other requests (autograd replays, Helion's tiled runs)
have no second run to compare.
"""
from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field

import numpy as np

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass
class Standing:
    seed: int
    used: list[tuple[str, list[tuple[str, int]]]] = field(default_factory=list)  # (what, stack: file, line)


_current: Standing | None = None


@contextlib.contextmanager
def standing_in(seed: int):
    """Within it, inline assembly computes the stand-in of ``seed``; yields the record of its uses."""
    global _current
    before, _current = _current, Standing(seed)
    try:
        yield _current
    finally:
        _current = before


def current() -> Standing | None:
    return _current


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every input bit reaches every output bit."""
    with np.errstate(over="ignore"):
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


def _bits(data: np.ndarray) -> np.ndarray:
    data = np.ascontiguousarray(data)
    unsigned = data.view(f"uint{data.dtype.itemsize * 8}") if data.dtype.itemsize in (1, 2, 4, 8) else \
        data.astype(np.uint64)
    return unsigned.astype(np.uint64)


def values(seed: int, operands: list[np.ndarray], shape: tuple[int, ...], results: int) -> list[np.ndarray]:
    """``results`` arrays of 64 random bits per element, a function of the seed and the operands."""
    with np.errstate(over="ignore"):
        h = np.full(shape, np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15), dtype=np.uint64)
        for operand in operands:
            h = _mix(h ^ np.broadcast_to(_bits(operand), shape))
        return [_mix(h + np.uint64(i + 1)) for i in range(results)]


def as_dtype(bits: np.ndarray, dtype: np.dtype, to_bf16=None) -> np.ndarray:
    """Random bits as an element type: a float of random sign and a magnitude spread evenly over
    2^-E .. 2^E (E = 20, or what the type holds: fp16 to 2^14), so that a test against any constant
    of that range falls both ways; an integer's bits; a bool's lowest. ``to_bf16``: for a bf16
    result, the rounding to its 16-bit patterns."""
    if to_bf16 is not None or np.dtype(dtype).kind == "f":
        top = 20 if to_bf16 is not None else min(20, int(np.log2(np.finfo(dtype).max)) - 1)
        unit = (bits >> np.uint64(12)).astype(np.float64) * 2.0 ** -52
        sign = np.where(bits & np.uint64(1), -1.0, 1.0)
        floats = (sign * np.exp2(unit * 2 * top - top)).astype(np.float32)
        return to_bf16(floats) if to_bf16 is not None else floats.astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return (bits & np.uint64(1)).astype(bool)
    return (bits & _MASK).astype(np.uint64).view(np.int64).astype(dtype) if np.dtype(dtype).kind == "i" else \
        bits.astype(dtype)


class _Results:
    """What ``builder.create_inline_asm`` returns: its results, one per output type."""

    def __init__(self, handles) -> None:
        self.handles = handles

    def get_result(self, index: int):
        return self.handles[index]


def stand_in(interpreter, tl, what: str, operands, types, stand: Standing, to_bf16) -> _Results:
    """The stand-in results of one inline assembly call, recorded with where it was called."""
    frame, stack = sys._getframe(1), []
    while frame is not None:
        stack.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    stand.used.append((what, stack))
    datas = [np.asarray(h.data) for h in operands]
    shape = np.broadcast_shapes(*(d.shape for d in datas)) if datas else (1,)
    handles = []
    for bits, ty in zip(values(stand.seed, datas, shape, len(types)), types):
        scalar = ty.scalar if hasattr(ty, "scalar") else ty
        bf16 = scalar == tl.bfloat16
        dtype = np.dtype(np.uint16) if bf16 else interpreter._get_np_dtype(scalar)
        handles.append(interpreter.TensorHandle(as_dtype(bits, dtype, to_bf16 if bf16 else None), scalar))
    return _Results(handles)
