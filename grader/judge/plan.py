"""One case, made concrete: its inputs, the spec's expected outputs, the fenced buffers, and
every named integer the kernel may ask for (sizes, blocks, strides).

The inputs are random, built from the spec's annotations.

Floats are centred on zero (so a missing relu or a sign mistake shows), scaled by the case
(so a softmax without max-subtraction overflows), and optionally rounded to fewer mantissa
bits (so TF32 ``tl.dot`` on a GPU is exact). Integers cover their dtype's full range, or the
puzzle's ``ranges``. A case's ``edges`` then reshape named inputs (exact zeros, a late row
maximum, all-negative rows, ignored targets).
"""
from __future__ import annotations

import threading
import zlib
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Callable

import torch

from grader.course.annotations import TensorSpec, read_spec
from grader.course.case import IGNORE_VARIANT
from grader.course.dtypes import DTYPES
from grader.course.puzzle import Case, Puzzle, with_case_values
from grader.course.puzzle_parts import LookAlike
from grader.judge.fence import ROW_GAP, UNWRITTEN, Buffer, Fill, unwritten_fill


def students_secret(secret: int, student: str) -> int:
    """A batch's secret mixed with one student's name: their inputs and drawn sizes are theirs alone,
    so what a failure message shows one student says nothing of another's case. No secret: none."""
    if not secret or not student:
        return secret
    return zlib.crc32(f"{secret}:{student}".encode()) or 1


def case_seed(puzzle: Puzzle, case: Case, secret: int = 0) -> int:
    """A seed per (puzzle, case seed): the same everywhere, unless a batch adds a secret."""
    return zlib.crc32(f"{puzzle.id}:{case.seed}:{secret}".encode())


def stale_seed(puzzle: Puzzle, case: Case, secret: int = 0) -> int:
    """The seed of a case's stale output values (fence.stale_fill): the case's own, and apart from its inputs'."""
    return zlib.crc32(f"{puzzle.id}:{case.seed}:{secret}:stale".encode())


def round_mantissa(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Round float32 values to ``bits`` explicit mantissa bits (nearest, ties away from zero)."""
    if not 0 <= bits <= 23:
        raise ValueError(f"mantissa bits must be 0..23, got {bits}")
    drop = 23 - bits
    if drop == 0:
        return x
    as_int = x.contiguous().view(torch.int32)
    rounded = (as_int + (1 << (drop - 1))) & ~((1 << drop) - 1)
    return rounded.view(torch.float32)


def every_third_zero(x: torch.Tensor, scale: float) -> torch.Tensor:
    x = x.clone()
    x.view(-1)[::3] = 0
    return x


def max_in_last_column(x: torch.Tensor, scale: float) -> torch.Tensor:
    x = x.clone()
    x[..., -1] = x.amax(dim=-1) + 4 * scale
    return x


def at_most_minus_scale(x: torch.Tensor, scale: float) -> torch.Tensor:
    return -(x.abs() + scale)


def constant_rows(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x[..., :1].expand(x.shape).clone()


def shifted_far_from_zero(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x + 256 * scale


def every_third_ignored(x: torch.Tensor, scale: float, ignore: int = -100) -> torch.Tensor:
    x = x.clone()
    x.view(-1)[::3] = ignore
    return x


# What each of puzzle.EDGES does to a float tensor (see Case); "zeros" and "ignore_index" suit integers.
EDGE_VALUES = {"zeros": every_third_zero, "max_last_chunk": max_in_last_column, "all_negative": at_most_minus_scale,
               "constant_rows": constant_rows, "large_mean": shifted_far_from_zero, "ignore_index": every_third_ignored}
INTEGER_EDGES = ("zeros", "ignore_index")


def make_input(spec: TensorSpec, shape: tuple[int, ...], gen: torch.Generator, case: Case,
               mantissa_bits: int | None, bounds: tuple[int, int] | None = None, ignore: int = -100) -> torch.Tensor:
    edge = case.edges.get(spec.name)
    if spec.dtype.startswith(("float", "bfloat")):
        x = torch.randn(shape, generator=gen, dtype=torch.float32) * case.scale
        if edge is not None:  # before rounding, so the values stay exact in the rounded format
            x = EDGE_VALUES[edge](x, case.scale)
        if mantissa_bits is not None:
            x = round_mantissa(x, mantissa_bits)
        return x.to(getattr(torch, spec.dtype))
    if edge not in (None, *INTEGER_EDGES):
        raise ValueError(f"case {case.name!r}: edge {edge!r} needs a float input, but {spec.name} is {spec.dtype}")
    if spec.dtype == "bool":
        x = torch.randint(0, 2, shape, generator=gen).bool()
    else:
        info = torch.iinfo(getattr(torch, spec.dtype))
        low, high = bounds if bounds is not None else (info.min, info.max)
        wide = torch.randint(low, high, shape, generator=gen, dtype=torch.int64)
        x = wide.to(getattr(torch, spec.dtype))
    if edge == "ignore_index":
        return every_third_ignored(x, case.scale, ignore)
    return x if edge is None else EDGE_VALUES[edge](x, case.scale)


def integer_bounds(puzzle: Puzzle, name: str, dims) -> tuple[int, int] | None:
    """``[low, high)`` for an integer input the puzzle bounds (``Puzzle.ranges``), else None."""
    bounds = puzzle.ranges.get(name)
    return None if bounds is None else tuple(int(b) for b in bounds(dims))


def make_inputs(puzzle: Puzzle, specs: tuple[TensorSpec, ...], case: Case, secret: int = 0) -> list[torch.Tensor]:
    unknown = sorted(set(case.edges) - {s.name for s in specs})
    if unknown:
        raise ValueError(f"{puzzle.id} case {case.name!r}: edges name {unknown}, which are not inputs of the spec "
                         f"({', '.join(s.name for s in specs)})")
    gen = torch.Generator().manual_seed(case_seed(puzzle, case, secret))
    dims = {**puzzle.sizes(case), **case.blocks}
    ignore = int(puzzle.variant_values.get(IGNORE_VARIANT, -100))
    return [make_input(s, s.shape(dims), gen, case, puzzle.mantissa_bits.get(s.name),
                       integer_bounds(puzzle, s.name, dims), ignore) for s in specs]


def rows_read_as_contiguous(x: torch.Tensor) -> torch.Tensor:
    """What a kernel indexing ``row * D`` reads of ``x`` stored ``row_strided``: its rows and the
    gaps between them (the unwritten fill) taken as one run of memory."""
    d = x.shape[-1]
    rows = x.reshape(-1, d)
    stored = unwritten_fill(x.dtype, (rows.shape[0], d + ROW_GAP))
    stored[:, :d] = rows
    return stored.reshape(-1)[:x.numel()].reshape(x.shape)


def row_gaps_look_alike(puzzle: Puzzle, case: Case, kernel: bool = False) -> LookAlike | None:
    """The spec on the case's ``row_strided`` inputs read as if contiguous: what a wrapper that
    flattens them with ``reshape`` (which keeps the row stride) and indexes ``row * D`` computes,
    or (``kernel``) a kernel that steps between rows by the row length, not the stride it is passed."""
    names = [name for name, layout in case.layouts.items() if layout == "row_strided"]
    if not names:
        return None
    specs = read_spec(puzzle.spec, puzzle.outputs)[0]
    which = [s.name in names for s in specs]

    def spec(*inputs, sizes):
        return puzzle.run_spec([rows_read_as_contiguous(x) if gap else x for x, gap in zip(inputs, which)], sizes)
    shown = ", ".join(f"`{n}`" for n in names)
    if kernel:
        return LookAlike(f"{shown} read as if its rows were contiguous", spec,
                         f"in this case {shown} is a slice of a wider tensor, its rows {ROW_GAP} elements apart in "
                         f"memory: step from row to row by the row stride your kernel is passed, never by the "
                         f"row's length")
    return LookAlike(f"{shown} read as if its rows were contiguous", spec,
                     f"in this case {shown} is a slice of a wider tensor, its rows {ROW_GAP} elements apart in memory, "
                     f"and `reshape(-1, D)` keeps that row stride (it copies only when it must): make the rows "
                     f"contiguous with `.contiguous()`, or pass the kernel the row stride (`x.stride(-2)`)")


@dataclass(frozen=True)
class CasePlan:
    case: Case
    inputs: tuple[torch.Tensor, ...]
    spec_result: Future                  # resolves to the spec's outputs: see ``expected``
    buffers: tuple[Buffer, ...]          # inputs, then outputs
    values: dict[str, int]               # sizes, blocks and strides, by name
    grid: tuple[int, ...]
    # What the unwritten outputs hold in the run that checks a result does not depend on them
    # (grader.judge.early_reads): stale values drawn from the case's seed, the first run's marker where none.
    refill: Fill = UNWRITTEN

    @property
    def expected(self) -> tuple[torch.Tensor, ...]:
        """What the spec returns, one tensor per output. A large case's is computed on a thread
        of its own while the kernel runs (``SpecShapes.plan``): this waits for it, and raises
        what the spec raised."""
        return self.spec_result.result()

    @property
    def output_buffers(self) -> tuple[Buffer, ...]:
        return self.buffers[len(self.inputs):]


def computed(work: Callable[[], object], beside: bool, name: str = "spec beside the kernel") -> Future:
    """``work()``'s result as a Future: computed now (what it raises, raised here), or
    (``beside``) on a thread of its own called ``name`` (raised where the result is read)."""
    future: Future = Future()
    if not beside:
        future.set_result(work())
        return future

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:  # noqa: BLE001 (raised again where the result is read)
            future.set_exception(exc)
    threading.Thread(target=run, name=name, daemon=True).start()
    return future


class SpecShapes:
    """The spec's annotations, read once per puzzle."""

    def __init__(self, puzzle: Puzzle) -> None:
        self.puzzle = puzzle
        self.inputs, self.outputs = read_spec(puzzle.spec, puzzle.outputs)

    @property
    def all(self) -> tuple[TensorSpec, ...]:
        return (*self.inputs, *self.outputs)

    def buffer_dims(self, spec: TensorSpec) -> TensorSpec:
        """An output's buffer may have other dims than the spec's result (``Puzzle.allocate``)."""
        dims = self.puzzle.allocate.get(spec.name)
        return spec if dims is None else TensorSpec(spec.name, spec.dtype, tuple(dims.split()))

    def typed(self, case: Case) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
        """The inputs' and outputs' specs with the case's ``dtypes`` applied."""
        by_name = {s.name: s for s in self.all}
        for name, dtype in case.dtypes.items():
            if name not in by_name:
                raise ValueError(f"{self.puzzle.id} case {case.name!r}: dtypes name {name!r}, which is not a tensor "
                                 f"of the spec ({', '.join(by_name)})")
            if not DTYPES[by_name[name].dtype].is_float:
                raise ValueError(f"{self.puzzle.id} case {case.name!r}: {name} is {by_name[name].dtype}; "
                                 "only float tensors can take another dtype")

        def retype(spec: TensorSpec) -> TensorSpec:
            dtype = case.dtypes.get(spec.name)
            return spec if dtype is None else TensorSpec(spec.name, dtype, spec.dims)
        return tuple(map(retype, self.inputs)), tuple(map(retype, self.outputs))

    def _prepared(self, case: Case, inputs: list[torch.Tensor], dims) -> list[torch.Tensor]:
        made = tuple(with_case_values(self.puzzle.prepare, [x.clone() for x in inputs],
                                      {**self.puzzle.variant_values, **dims}))
        if len(made) != len(inputs) or any(tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype
                                           for a, b in zip(made, inputs)):
            raise ValueError(f"{self.puzzle.id} case {case.name!r}: prepare must return the {len(inputs)} inputs "
                             "with their shapes and dtypes unchanged")
        return [x.contiguous() for x in made]

    def plan(self, case: Case, secret: int = 0, device: str = "cpu") -> CasePlan:
        """``device``: where ``prepare`` and the spec run (--bench's large sizes: the GPU); the
        inputs are made on the CPU, and the plan's tensors are on the CPU, either way."""
        puzzle = self.puzzle
        dims = {**puzzle.sizes(case), **case.blocks}
        input_specs, output_specs = self.typed(case)
        inputs = make_inputs(puzzle, input_specs, case, secret)
        if device != "cpu":
            inputs = [x.to(device) for x in inputs]
        if puzzle.prepare is not None:
            inputs = self._prepared(case, inputs, dims)
        # A large case's spec (seconds of attention at 4096 queries) runs beside the kernel, which
        # needs only the inputs; the output buffers are planned from the annotations.
        spec_result = computed(lambda: self._expected([x.clone() for x in inputs], dims, output_specs),
                               beside=case.large and device == "cpu")
        if device != "cpu":
            inputs = [x.cpu() for x in inputs]
        buffers = [Buffer.plan(s.name, "input", s.dtype, tuple(x.shape), i, case.layouts.get(s.name, "contiguous"))
                   for i, (s, x) in enumerate(zip(input_specs, inputs))]
        for spec in output_specs:
            buffers.append(Buffer.plan(spec.name, "output", spec.dtype, self.buffer_dims(spec).shape(dims),
                                       len(buffers), case.layouts.get(spec.name, "contiguous")))
        values = dict(dims)
        for buffer in buffers:
            for name, stride in zip(puzzle.strides.get(buffer.name, ()), buffer.strides):
                values[name] = stride
        return CasePlan(case, tuple(inputs), spec_result, tuple(buffers), values, puzzle.launch_grid(case),
                        Fill(stale_seed(puzzle, case, secret)))

    def _expected(self, inputs: list[torch.Tensor], dims, output_specs) -> tuple:
        """The spec's outputs for ``inputs``, on the CPU, checked against its annotations."""
        puzzle = self.puzzle
        result = puzzle.run_spec(inputs, dims)
        expected = tuple(x.cpu() for x in (result if isinstance(result, tuple) else (result,)))
        if len(expected) != len(output_specs):
            raise ValueError(f"{puzzle.id} spec returned {len(expected)} tensor(s), but its annotation names "
                             f"{len(output_specs)}: {', '.join(s.name for s in output_specs)}")
        for spec, value in zip(output_specs, expected):
            if tuple(value.shape) != spec.shape(dims) or value.dtype != getattr(torch, spec.dtype):
                raise ValueError(f"{puzzle.id} spec returned {tuple(value.shape)} {value.dtype} for "
                                 f"{spec.name}, but its annotation says {spec.describe()} = {spec.shape(dims)}")
        return expected
