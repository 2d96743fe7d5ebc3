"""Fenced buffers: every kernel argument sits between two guard regions.

The grader lays each tensor out as ``[guard | data | guard]`` in one byte buffer, fills the
guards with a known byte, and fills the output's data with a NaN that carries a payload of
our own. The worker runs the kernel on views of these buffers and sends the bytes back; the
grader then sees, on a GPU as in the interpreter:

* a store past either end of a tensor, as damaged guard bytes;
* output elements never written, as the payload NaN still in place.

Guards are at least as large as the data, so a store that runs a whole tensor past its end
still lands in its own guard rather than in a neighbour.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from grader.channel.wire_format import BufferSpec
from grader.course.dtypes import DTYPES

# Guard bytes: 0x7F, 0x7E, ... one per buffer. As float32 they are huge (3.4e38, 8.5e37, ...),
# so a GPU load that strays into a guard shows up in the values; and no two buffers share a
# pattern, so an unmasked copy from one guard into the next is still seen as a stray store.
GUARD_BYTE = 0x7F
ALIGN = 128  # bytes; Triton assumes 16-byte aligned pointers on a GPU, 128 keeps rows tidy
MIN_GUARD = 4096

# The value every output element holds before the kernel runs. A NaN with a payload that
# arithmetic never produces, so "never written" is told apart from "computed a NaN".
_UNWRITTEN_BITS = {getattr(torch, d.name): (getattr(torch, d.nan_view), d.nan_bits)
                   for d in DTYPES.values() if d.nan_view is not None}
_UNWRITTEN_INT = -0x5A5A5A5B  # 0xA5A5A5A5 as int32: improbable as a computed integer


def torch_dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


ROW_GAP = 16  # elements between one row's end and the next row's start, in a "row_strided" layout


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


@dataclass(frozen=True)
class Buffer:
    """Where one tensor lives inside its fenced byte buffer."""

    name: str
    role: str  # "input" or "output"
    dtype: str
    shape: tuple[int, ...]
    guard: int  # bytes before and after the data
    nbytes: int
    guard_byte: int = GUARD_BYTE
    strides: tuple[int, ...] = ()  # element strides of the tensor's view of its data

    @staticmethod
    def plan(name: str, role: str, dtype: str, shape: tuple[int, ...], index: int = 0,
             layout: str = "contiguous") -> "Buffer":
        """``index`` is the argument's position: it picks this buffer's own guard byte.
        ``layout="transposed"`` stores the dims in reverse order (column-major for a matrix);
        ``"row_strided"`` keeps the last dim contiguous but starts each row ``ROW_GAP`` elements
        after the previous one ends (a slice of a wider tensor), the gaps holding the unwritten fill."""
        itemsize = torch.empty((), dtype=torch_dtype(dtype)).element_size()
        shape = tuple(shape)
        stored = _numel(shape)
        if layout == "transposed":
            strides = _contiguous_strides(shape[::-1])[::-1]
        elif layout == "row_strided" and shape and stored:
            strides = _contiguous_strides(shape[:-1] + (shape[-1] + ROW_GAP,))
            stored = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        else:
            strides = _contiguous_strides(shape)
        nbytes = itemsize * max(1, stored)
        guard = _round_up(max(MIN_GUARD, nbytes), ALIGN)
        return Buffer(name, role, dtype, shape, guard, nbytes, GUARD_BYTE - index, strides)

    @property
    def total(self) -> int:
        return 2 * self.guard + _round_up(self.nbytes, ALIGN)

    @property
    def itemsize(self) -> int:
        return torch.empty((), dtype=torch_dtype(self.dtype)).element_size()

    @property
    def numel(self) -> int:
        return _numel(self.shape)

    def spec(self, param: str = "") -> BufferSpec:
        """The buffer as the worker is told of it, passed as kernel parameter ``param``."""
        return BufferSpec(self.name, self.role, self.dtype, tuple(self.shape), tuple(self.strides), self.guard,
                          self.nbytes, self.total, param)


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def unwritten_fill(dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    if dtype in _UNWRITTEN_BITS:
        int_dtype, bits = _UNWRITTEN_BITS[dtype]
        return torch.full(shape, bits, dtype=int_dtype).view(dtype)
    return torch.full(shape, _UNWRITTEN_INT if dtype != torch.bool else 0, dtype=torch.int64).to(dtype)


def stale_fill(dtype: torch.dtype, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Values such as a GPU's reused memory holds, drawn from ``seed`` element by element: zeros
    (fresh memory), plausible numbers (a freed tensor's: floats of a few units, integers over the
    dtype's range) and, for floats, large ones. Never the marker, so every element an early read
    sees differs from the first run's, and a test that tells the marker from any one of these
    (``x != x``, ``x == 0``, ``x > 1e6``) changes the result somewhere. Booleans, whose marker is
    False, are all True."""
    if dtype == torch.bool:
        return torch.ones(shape, dtype=torch.bool)
    gen = torch.Generator().manual_seed(seed)
    kind = torch.randint(0, 8, shape, generator=gen)  # 0, 1: zero; 2: large; else plausible
    if dtype.is_floating_point:
        drawn = torch.randn(shape, generator=gen, dtype=torch.float64)
        large = torch.finfo(dtype).max ** 0.5
        values = torch.where(kind == 2, drawn.sign() * large * (1 + drawn.abs()).clamp(max=2), drawn * 8)
        return torch.where(kind < 2, 0.0, values).to(dtype)
    info = torch.iinfo(dtype)
    drawn = torch.randint(info.min, info.max, shape, generator=gen, dtype=torch.int64).to(dtype)
    drawn = torch.where(kind < 2, torch.zeros((), dtype=dtype), drawn)
    return torch.where(is_unwritten(drawn), drawn ^ 1, drawn)  # a byte or a short meets the marker often


@dataclass(frozen=True)
class Fill:
    """What an output's elements hold before the kernel runs: the grader's marker (``seed`` None),
    which tells "never written" apart from anything computed, or stale values drawn from ``seed``
    (:func:`stale_fill`), for the run that checks a result does not depend on them."""

    seed: int | None = None

    def values(self, dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
        return unwritten_fill(dtype, shape) if self.seed is None else stale_fill(dtype, shape, self.seed)


UNWRITTEN = Fill()


def is_unwritten(values: torch.Tensor) -> torch.Tensor:
    """Elementwise: does the element still hold the grader's fill?"""
    if values.dtype in _UNWRITTEN_BITS:
        int_dtype, bits = _UNWRITTEN_BITS[values.dtype]
        return values.view(int_dtype) == bits
    return values == unwritten_fill(values.dtype, ()).item()


def pack(buffer: Buffer, data: torch.Tensor | None, fill: Fill = UNWRITTEN) -> bytearray:
    """The fenced bytes: guards, then ``data`` (or ``fill``: an output not yet written), then guards."""
    raw = bytearray([buffer.guard_byte]) * buffer.total
    if data is None:
        data = fill.values(torch_dtype(buffer.dtype), buffer.shape)
    stored = max(1, buffer.nbytes // buffer.itemsize)
    # where a layout leaves gaps between rows, they hold the unwritten fill
    flat = torch.empty(stored, dtype=data.dtype) if stored == max(1, buffer.numel) else \
        unwritten_fill(data.dtype, (stored,))
    flat.as_strided(buffer.shape, buffer.strides).copy_(data)
    body = flat.view(torch.uint8).numpy().tobytes()
    assert len(body) == buffer.nbytes or (buffer.numel == 0), (buffer, len(body))
    raw[buffer.guard:buffer.guard + len(body)] = body
    return raw


@dataclass(frozen=True)
class GuardDamage:
    """Guard bytes a kernel overwrote, in elements relative to the tensor's first element."""

    before: tuple[int, int] | None  # (first, last) element index written before the start, negative
    after: tuple[int, int] | None   # (first, last) element index written past the end
    count: int                      # elements touched in the guards


def unpack(buffer: Buffer, raw: bytes) -> tuple[torch.Tensor, GuardDamage | None]:
    """The tensor's data, and what the kernel wrote into the guards (None if nothing)."""
    if len(raw) != buffer.total:
        raise ValueError(f"buffer {buffer.name}: got {len(raw)} bytes back, expected {buffer.total}")
    all_bytes = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
    data = all_bytes[buffer.guard:buffer.guard + buffer.nbytes].view(torch_dtype(buffer.dtype))
    data = data.as_strided(buffer.shape, buffer.strides).clone()
    damaged = (all_bytes != buffer.guard_byte)
    damaged[buffer.guard:buffer.guard + buffer.nbytes] = False
    if not bool(damaged.any()):
        return data, None
    positions = torch.nonzero(damaged).flatten()
    element = (positions - buffer.guard).div(buffer.itemsize, rounding_mode="floor")
    before = element[element < 0]
    after = element[element >= buffer.nbytes // buffer.itemsize]
    count = int(torch.unique(element).numel())
    return data, GuardDamage(
        before=(int(before.min()), int(before.max())) if before.numel() else None,
        after=(int(after.min()), int(after.max())) if after.numel() else None,
        count=count,
    )
