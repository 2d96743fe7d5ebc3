"""One case, made concrete: its inputs, the spec's expected outputs, the fenced buffers, and
every named integer the kernel may ask for (sizes, blocks, strides)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from grader.course.annotations import TensorSpec, read_spec
from grader.course.dtypes import DTYPES
from grader.judge.fence import Buffer
from grader.judge.inputs import make_inputs
from grader.course.puzzle import Case, Puzzle, with_case_values


@dataclass(frozen=True)
class CasePlan:
    case: Case
    inputs: tuple[torch.Tensor, ...]
    expected: tuple[torch.Tensor, ...]   # what the spec returns, one per output
    buffers: tuple[Buffer, ...]          # inputs, then outputs
    values: dict[str, int]               # sizes, blocks and strides, by name
    grid: tuple[int, ...]

    @property
    def output_buffers(self) -> tuple[Buffer, ...]:
        return self.buffers[len(self.inputs):]


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
        made = tuple(with_case_values(self.puzzle.prepare, [x.clone() for x in inputs], dims))
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
        result = puzzle.run_spec([x.clone() for x in inputs], dims)
        expected = result if isinstance(result, tuple) else (result,)
        if device != "cpu":
            inputs, expected = [x.cpu() for x in inputs], tuple(x.cpu() for x in expected)
        buffers = [Buffer.plan(s.name, "input", s.dtype, tuple(x.shape), i, case.layouts.get(s.name, "contiguous"))
                   for i, (s, x) in enumerate(zip(input_specs, inputs))]
        for spec, value in zip(output_specs, expected):
            if tuple(value.shape) != spec.shape(dims) or value.dtype != getattr(torch, spec.dtype):
                raise ValueError(f"{puzzle.id} spec returned {tuple(value.shape)} {value.dtype} for "
                                 f"{spec.name}, but its annotation says {spec.describe()} = {spec.shape(dims)}")
            buffer_spec = self.buffer_dims(spec)
            buffers.append(Buffer.plan(spec.name, "output", spec.dtype, buffer_spec.shape(dims), len(buffers),
                                       case.layouts.get(spec.name, "contiguous")))
        values = dict(dims)
        for buffer in buffers:
            for name, stride in zip(puzzle.strides.get(buffer.name, ()), buffer.strides):
                values[name] = stride
        return CasePlan(case, tuple(inputs), tuple(expected), tuple(buffers), values, puzzle.launch_grid(case))
