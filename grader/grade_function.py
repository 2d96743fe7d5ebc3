"""Grading an autograd puzzle: the learner's ``torch.autograd.Function`` around their kernels.

Per case the grader checks, in this order: the forward's output (shape, dtype, values), that
each phase launched a Triton kernel, that no PyTorch operator computed on the inputs (or on
what a kernel was handed) in the kernels' place, that no thread was started, that the results
turn to NaN when the kernels' launches are replaced by NaN (the poisoned run, which catches
whatever the operator log cannot see: NumPy, threads, recording turned off), what ``ctx``
saved, and both gradients against PyTorch autograd of the spec. Once every case has run, the
wrapper's source is read for constructs that would hide where its result came from.
"""
from __future__ import annotations

import math
from dataclasses import replace

import torch

from . import messages, wire
from .annotations import TensorSpec
from .compare import compare_tensor, fmt_index
from .dtypes import DTYPES, dtype_name
from .fence import Buffer, pack
from .grade import PuzzleGrader, Unanswered, case_result, describe_case
from .inputs import case_seed
from .puzzle import Case
from .results import CheckResult

# What PyTorch may compute on the kernels' buffers: reducing a per-tile partial result.
REDUCTIONS_OF_PARTIALS = {"sum"}


def _shape(shape) -> str:
    return fmt_index(tuple(shape)) if len(shape) != 1 else f"({shape[0]},)"


class FunctionGrader(PuzzleGrader):
    """Same life cycle as a kernel puzzle (load, stub check, cases); a different case, and a
    static check of the wrapper's source after the cases."""

    def _grade(self, started: float):
        result = super()._grade(started)
        if result.status not in ("pass", "fail") or not result.cases:
            return result
        from .wrapper_check import check_file
        finding = check_file(self.kernel_file, self.puzzle.kernel)
        if finding is None:
            return result
        text = messages.wrapper_source(finding)
        checks = {**result.checks, "wrapper_source": CheckResult(False, text, "torch_compute")}
        return replace(result, status="fail", checks=checks, message=result.message if result.status == "fail" else text)

    def _run_case(self, case: Case, params, trace: bool = False):
        plan = self.shapes.plan(case, self.options.secret)
        describe = describe_case(case, self.puzzle)
        inputs = [x.clone().requires_grad_(x.is_floating_point()) for x in plan.inputs]
        output = self.puzzle.run_spec(inputs, {**self.puzzle.sizes(case), **case.blocks})
        gen = torch.Generator().manual_seed(case_seed(self.puzzle, case, self.options.secret) + 1)
        grad_output = torch.randn(output.shape, generator=gen, dtype=output.dtype)
        output.backward(grad_output)
        expected_grads = [x.grad for x in inputs]

        buffers = [*plan.buffers[:len(plan.inputs)],
                   Buffer.plan("grad_output", "input", dtype_name(grad_output),
                               tuple(grad_output.shape), len(plan.inputs))]
        blobs = [pack(b, x) for b, x in zip(buffers, [*plan.inputs, grad_output])]
        message = wire.Function(file=str(self.kernel_file), kernel=self.puzzle.kernel,
                                buffers=[b.to_json() | {"param": ""} for b in buffers],
                                poison_first=case_seed(self.puzzle, case, self.options.secret) % 2 == 1)
        fail = lambda kind, text, **extra: (  # noqa: E731
            case_result(case, self.puzzle, False, kind, f"{describe}: {text}", **extra), None, None)
        try:
            reply, raw = self._ask(message, blobs)
            if isinstance(reply, wire.FunctionRan) and len(raw) != reply.blobs_expected():
                self._malformed(wire.WireError(f"{len(raw)} blobs for {reply.blobs_expected()} tensors"))
            got = self._tensors(reply, raw) if isinstance(reply, wire.FunctionRan) and reply.result else None
        except Unanswered as unanswered:
            return self._unanswered_case(case, describe, unanswered)

        extra = {"seconds": reply.seconds, "printed": reply.printed} if isinstance(reply, wire.FunctionRan) \
            else {"seconds": 0.0, "printed": ""}
        failure = reply if isinstance(reply, wire.Failure) else reply.failure
        if failure is not None:
            kind, text, abort = self._case_failure(failure)
            return (case_result(case, self.puzzle, False, kind, f"{describe}: {text}", **extra), None,
                    f"{case.label} {abort}" if abort else None)

        result = reply.result
        output_got, grads_got, poisoned_got = got
        name = self.puzzle.outputs[0]
        verdict = self._check_output(name, output_got, result.output, plan.expected[0], case)
        if verdict is None:
            verdict = self._check_kernels_did_the_work(result)
        if verdict is None:
            verdict = self._check_poisoned(result.poisoned, poisoned_got, [plan.expected[0], *expected_grads])
        if verdict is None:
            verdict = self._check_saved(result, case)
        if verdict is None:
            verdict = self._check_grads(grads_got, result.grads, expected_grads, case)
        if verdict is not None:
            return fail(*verdict, **extra)
        return case_result(case, self.puzzle, True, **extra), None, None

    def _not_callable(self, failure: wire.Failure) -> str:
        return (f"`{self.puzzle.kernel}` must be a subclass of torch.autograd.Function "
                "with static forward and backward methods.")

    def _bounds_dims(self, access: wire.OutOfBoundsAccess) -> tuple[str, ...]:
        return ()  # the wrapper's own tensors have no dims of the spec's

    def _tensors(self, reply: wire.FunctionRan, raw: list[bytes]):
        """The recorded run's output and gradients, and the poisoned run's (None where the
        wrapper returned something else than a tensor, or the poisoned run failed)."""
        blobs = iter(raw)
        take = lambda described: [self._tensor(d, next(blobs)) if d.tensor else None  # noqa: E731
                                  for d in described]
        got = take(reply.result.described)
        poisoned = take(reply.result.poisoned.described) if reply.result.poisoned.failure is None else None
        return got[0], got[1:], poisoned

    def _tensor(self, described: wire.TensorInfo, blob: bytes) -> torch.Tensor:
        if min(described.shape, default=0) < 0 or math.prod(described.shape) > len(blob):  # >= 1 byte each
            self._malformed(wire.WireError(f"{len(blob)} bytes for a tensor of shape {described.shape}"))
        if described.dtype not in DTYPES:
            return torch.full(described.shape, float("nan"))
        dtype = getattr(torch, described.dtype)
        if len(blob) != math.prod(described.shape) * torch.empty((), dtype=dtype).element_size():
            self._malformed(wire.WireError(f"{len(blob)} bytes for a {described.dtype} tensor of shape "
                                           f"{described.shape}"))
        flat = torch.frombuffer(bytearray(blob), dtype=dtype) if blob else torch.empty(0, dtype=dtype)
        return flat.reshape(described.shape).clone()

    def _check_output(self, name, got, described: wire.TensorInfo, expected, case):
        want = f"{_shape(expected.shape)} {dtype_name(expected)}"
        if got is None:
            return "shape", (f"forward returned a {described.type}, not a tensor: return the output "
                             f"tensor, of shape {want}.")
        if tuple(got.shape) != tuple(expected.shape) or got.dtype != expected.dtype:
            return "shape", (f"forward returned {_shape(got.shape)} {described.dtype}, expected {want}: "
                             f"reshape the kernel's output back to the input's leading dims "
                             f"(x.shape[:-1]) and keep {dtype_name(expected)}.")
        atol, rtol = self.puzzle.tolerance(dtype_name(expected))
        outcome = compare_tensor(name, got, expected, atol, rtol,
                                 on_gpu=self.options.device == "cuda", filled=False)
        return None if outcome.passed else (outcome.kind, outcome.message)

    def _check_kernels_did_the_work(self, result: wire.FunctionResult):
        for phase in ("forward", "backward"):
            if getattr(result.launches, phase) == 0:
                return "torch_compute", (f"the {phase} launched no Triton kernel: compute it with your "
                                         f"kernels from the previous puzzles.")
        cheats = computes_on_inputs(result.ops)
        if cheats:
            op = cheats[0]
            shapes = ", ".join(_shape(s) for s in op.inputs)
            return "torch_compute", (f"the {op.phase} computed with PyTorch: `aten.{op.op}` read an input "
                                     f"(operand shapes {shapes}). The result must come from your Triton kernels; "
                                     f"PyTorch may only allocate, reshape and reduce the kernels' partial results.")
        cheats = computes_on_kernel_buffers(result.ops)
        if cheats:
            op = cheats[0]
            return "torch_compute", messages.computed_on_kernel_buffers(
                op.phase, op.op, ", ".join(_shape(s) for s in op.inputs))
        for phase in ("forward", "backward"):
            if getattr(result.threads.started, phase):
                return "torch_compute", messages.started_threads(phase, getattr(result.threads.started, phase))
        if result.threads.still_running:
            return "torch_compute", messages.started_threads("wrapper", len(result.threads.still_running))
        return None

    def _check_poisoned(self, poisoned: wire.Poisoned, got: list | None, expected: list[torch.Tensor]):
        """With every kernel launch replaced by NaN in the buffers the kernels were handed, a
        result computed by the kernels is NaN (or at least wrong); a correct one came from elsewhere."""
        if poisoned.failure is not None:
            return "torch_compute", messages.poisoned_run_raised(poisoned.failure.to_json())
        names = [self.puzzle.outputs[0], *(f"grad_{s.name}" for s in self.shapes.inputs)]
        phases = ["forward", *("backward" for _ in self.shapes.inputs)]
        for name, phase, got, want in zip(names, phases, got, expected):
            if got is None or want is None or tuple(got.shape) != tuple(want.shape) or not got.is_floating_point():
                continue
            atol, rtol = self.puzzle.tolerance(dtype_name(want))
            close = torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol)
            matching = int(close.sum())
            if matching:
                return "torch_compute", messages.not_from_kernels(phase, name, matching, close.numel())
        return None

    def _check_saved(self, result: wire.FunctionResult, case: Case):
        names = [s.name for s in self.shapes.inputs]
        for attribute in result.attributes:
            return "saved", (f"ctx.{attribute.name} holds a tensor: pass tensors to ctx.save_for_backward, "
                             f"which autograd tracks and frees, not as attributes of ctx.")
        # Besides the inputs, a puzzle may let ctx keep a few results (say a row's mean and
        # rstd): each by its shape, each shape as many times as the puzzle names it.
        dims = {**self.puzzle.sizes(case), **case.blocks}
        allowed = [TensorSpec(name, "float32", tuple(spec.split())).shape(dims)
                   for name, spec in self.puzzle.saves.items()]
        for saved in result.saved:
            if saved.input is not None:
                continue
            if tuple(saved.shape) in allowed:
                allowed.remove(tuple(saved.shape))
                continue
            needed = ", ".join([*names, *self.puzzle.saves])
            return "saved", (f"ctx saved a tensor of shape {_shape(saved.shape)} that is not an input"
                             f"{' nor one of ' + ', '.join(self.puzzle.saves) if self.puzzle.saves else ''}: "
                             f"save only what the backward needs ({needed}), and recompute the rest.")
        return None

    def _check_grads(self, got, described, expected, case):
        names = [s.name for s in self.shapes.inputs]
        if len(got) != len(expected):
            return "shape", (f"backward returned {len(got)} value(s); it must return one gradient per forward "
                             f"input ({', '.join(names)}).")
        for name, tensor, info, want in zip(names, got, described, expected):
            label = f"grad_{name}"
            if want is None:  # an integer input (class indices): no gradient, and autograd ignores one
                continue
            if tensor is None:
                return "shape", f"backward returned {info.type} for {label}; return a tensor of shape {_shape(want.shape)}."
            if tuple(tensor.shape) != tuple(want.shape):
                return "shape", (f"backward returned {label} of shape {_shape(tensor.shape)}, expected "
                                 f"{_shape(want.shape)}: a gradient has its input's shape.")
            atol, rtol = self.puzzle.tolerance(dtype_name(want))
            outcome = compare_tensor(label, tensor, want, atol, rtol,
                                     on_gpu=self.options.device == "cuda", filled=False)
            if not outcome.passed:
                return outcome.kind, outcome.message
        return None


def computes_on_inputs(ops: tuple[wire.TorchOp, ...]) -> list[wire.TorchOp]:
    """PyTorch compute operators that read an input (or a copy of one): the kernels' job."""
    return [op for op in ops if op.reads_inputs and not op.layout]


def computes_on_kernel_buffers(ops: tuple[wire.TorchOp, ...]) -> list[wire.TorchOp]:
    """PyTorch compute operators, other than a reduction of partial results, that read a buffer
    a kernel was handed: after a kernel that only copies the inputs, the kernels' job too."""
    return [op for op in ops if op.reads_kernel_buffers and not op.layout
            and op.op not in REDUCTIONS_OF_PARTIALS]
