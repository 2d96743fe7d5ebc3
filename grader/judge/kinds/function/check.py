"""What an autograd case's recording and replay are judged on: the launches a GPU would refuse,
the program read (:mod:`grader.judge.kinds.function.program`), what ``ctx`` saved, and the output and both
gradients against PyTorch autograd of the spec. ``state`` is the puzzle's grading
(:class:`grader.judge.case_run.PuzzleState`: its shapes, options, ``malformed`` for bytes that do not fit).
"""
from __future__ import annotations

import math

import torch

import grader.judge.kinds.function.program as programs
from grader.channel import wire
from grader.channel.kinds import function as function_wire
from grader.course.annotations import TensorSpec
from grader.course.dtypes import DTYPES, dtype_name
from grader.course.limits import refusal
from grader.course.puzzle import Case
from grader.judge import failures
from grader.judge.compare import compare_tensor, recognise
from grader.judge.failures import FailureKind
from grader.judge.plan import row_gaps_look_alike


def refused_launch(program: function_wire.Program) -> "failures.LaunchRefused | None":
    """The first recorded launch a GPU would refuse (its grid, its num_warps), as it would raise."""
    for step in program.launches():
        warps = step.kwargs.get("num_warps")
        for grid in step.grids:
            why = refusal(grid, warps if isinstance(warps, int) else None)
            if why is not None:
                return failures.LaunchRefused(f"your {step.phase}'s launch of `{step.kernel.path[-1]}`", why,
                                              step.line, step.source)
    return None


def read_program(state, program: function_wire.Program, case: Case):
    names = [s.name for s in state.shapes.inputs]
    wants = [DTYPES[s.dtype].is_float for s in state.shapes.inputs]
    finding = programs.check(program, names, state.puzzle.outputs[0], wants, dict(state.puzzle.host_reductions))
    if finding is not None:
        return finding
    saved = check_saved(state, program, case)
    return None if saved is None else programs.Finding(saved)


def check_values(state, reply: function_wire.Replayed, raw: list[bytes], expected, case: Case, inputs):
    """The replay's output and gradients against the spec's; ``inputs``: the case's, for a look-alike."""
    blobs = iter(raw)
    got = [_tensor(state, d, next(blobs)) if d.tensor else None for d in reply.returned]
    if not got:
        state.malformed(wire.WireError("a replay that returned nothing"))
    verdict = _check_output(state, state.puzzle.outputs[0], got[0], reply.returned[0], expected[0])
    if verdict is not None and verdict.kind in (FailureKind.MISMATCH, FailureKind.NONFINITE):
        verdict = _another_students(state.puzzle, verdict, case, got[0], inputs)
    if verdict is None:
        verdict = _check_grads(state, got[1:], reply.returned[1:], expected[1:])
    return verdict


def _another_students(puzzle, verdict, case: Case, output: torch.Tensor, inputs):
    """The verdict, with a look-alike's note where the wrong output is the spec's with
    another value of one of the puzzle's variants: a file written for another student."""
    gaps = row_gaps_look_alike(puzzle, case)  # x a slice with gaps between its rows
    looks = puzzle.variant_look_alikes() + ((gaps,) if gaps is not None else ())
    if not looks or inputs is None:
        return verdict
    atol, rtol = puzzle.tolerance(dtype_name(output))
    expected = puzzle.run_spec([x.clone() for x in inputs], {**puzzle.sizes(case), **case.blocks})
    look = recognise(looks, inputs, (expected.detach(),), (output,), atol, rtol,
                     {**puzzle.variant_values, **puzzle.sizes(case), **case.blocks}, case.layouts)
    if look is None:
        return verdict
    return failures.LooksLike(verdict.kind, verdict, look)


def _tensor(state, described: wire.TensorInfo, blob: bytes) -> torch.Tensor:
    if min(described.shape, default=0) < 0 or math.prod(described.shape) > len(blob):  # >= 1 byte each
        state.malformed(wire.WireError(f"{len(blob)} bytes for a tensor of shape {described.shape}"))
    if described.dtype not in DTYPES:
        return torch.full(described.shape, float("nan"))
    dtype = getattr(torch, described.dtype)
    if len(blob) != math.prod(described.shape) * torch.empty((), dtype=dtype).element_size():
        state.malformed(wire.WireError(f"{len(blob)} bytes for a {described.dtype} tensor of shape "
                                        f"{described.shape}"))
    flat = torch.frombuffer(bytearray(blob), dtype=dtype) if blob else torch.empty(0, dtype=dtype)
    return flat.reshape(described.shape).clone()


def _check_output(state, name, got, described: wire.TensorInfo, expected):
    if got is None:
        return failures.NotATensor(described.type, tuple(expected.shape), dtype_name(expected))
    if tuple(got.shape) != tuple(expected.shape) or got.dtype != expected.dtype:
        return failures.WrongOutput(tuple(got.shape), described.dtype, tuple(expected.shape), dtype_name(expected))
    atol, rtol = state.puzzle.tolerance(dtype_name(expected))
    outcome = compare_tensor(name, got, expected, atol, rtol, on_gpu=state.options.device == "cuda", filled=False)
    return None if outcome.passed else outcome.facts


def check_saved(state, program: function_wire.Program,
                case: Case) -> "failures.CtxAttribute | failures.SavedExtra | None":
    puzzle = state.puzzle
    names = [s.name for s in state.shapes.inputs]
    for attribute in program.attributes:
        return failures.CtxAttribute(attribute)
    # Besides the inputs, a puzzle may let ctx keep a few results (say a row's mean and
    # rstd): each by its shape, each shape as many times as the puzzle names it.
    dims = {**puzzle.sizes(case), **case.blocks}
    allowed = [TensorSpec(name, "float32", tuple(spec.split())).shape(dims) for name, spec in puzzle.saves.items()]
    kept: dict[int, list[int]] = {}  # storage -> the saved refs that view it, each of an allowed shape
    for ref, is_input in zip(program.saved, programs.saved_inputs(program)):
        if ref is None or is_input:
            continue
        shape = tuple(program.metas[ref].shape)
        if shape in allowed:
            allowed.remove(shape)
            kept.setdefault(program.metas[ref].storage, []).append(ref)
            continue
        return failures.SavedExtra(shape, tuple(puzzle.saves), tuple(names))
    return _storage_kept(program, kept, tuple(puzzle.saves))


def _check_grads(state, got, described, expected):
    names = [s.name for s in state.shapes.inputs]
    if len(got) != len(expected):
        return failures.GradCount(len(got), tuple(names))
    for name, tensor, info, want in zip(names, got, described, expected):
        label = f"grad_{name}"
        if want is None:  # an integer input (class indices): no gradient, and autograd ignores one
            continue
        if tensor is None:
            return failures.GradNotTensor(info.type, label, tuple(want.shape))
        if tuple(tensor.shape) != tuple(want.shape):
            return failures.GradShape(label, tuple(tensor.shape), tuple(want.shape))
        atol, rtol = state.puzzle.tolerance(dtype_name(want))
        outcome = compare_tensor(label, tensor, want, atol, rtol, on_gpu=state.options.device == "cuda",
                                 filled=False)
        if not outcome.passed:
            return outcome.facts
    return None


def _storage_kept(program: function_wire.Program, kept: dict[int, list[int]], saves: tuple[str, ...]):
    """Saving a tensor keeps its whole storage alive, and the backward may read all of it: each
    storage ctx keeps may hold no more bytes than the allowed tensors saved from it take. A storage's
    bytes are the furthest any tensor of the program reaches into it (the replay has checked every
    one's layout against real tensors)."""
    for storage, refs in kept.items():
        reach = max(_reach(meta) for meta in program.metas if meta.storage == storage)
        allowed = sum(math.prod(program.metas[r].shape) * DTYPES[program.metas[r].dtype].itemsize for r in refs)
        if reach > allowed:
            meta = program.metas[refs[0]]
            return failures.SavedStorage(tuple(meta.shape), meta.dtype, reach, allowed, _made_by(program, storage),
                                         saves, len(refs))
    return None


def _reach(meta: function_wire.TensorMeta) -> int:
    """Bytes from the start of its storage to the end of the last element ``meta`` addresses."""
    if not meta.shape or 0 not in meta.shape:
        last = meta.offset + sum((size - 1) * abs(stride) for size, stride in zip(meta.shape, meta.strides))
        return (last + 1) * DTYPES[meta.dtype].itemsize if meta.dtype in DTYPES else 0
    return 0


def _made_by(program: function_wire.Program, storage: int) -> str:
    step = next((s for s in program.steps if s.op and any(program.metas[r].storage == storage for r in s.out)), None)
    if step is None:
        return ""
    where = f" at line {step.line}: `{step.source}`" if step.line else ""
    return f"`{programs.base_name(step.op)}`{where}"
