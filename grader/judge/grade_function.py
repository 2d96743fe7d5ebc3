"""Grading an autograd puzzle: the learner's ``torch.autograd.Function`` around their kernels.

The wrapper never sees data. For each case one worker runs its forward and backward on tensors
that have the case's shapes, strides and dtypes but no values, and records what they do as a
program (:mod:`grader.sandbox.function_record`). A second worker, forked fresh after the first
has ended, replays the program on the real inputs: PyTorch's operators and the learner's
kernels, no other learner code (:mod:`grader.sandbox.function_replay`); once per autotuning
config, where a launched kernel has several. The verdict comes from the replay and from
reading the program here (:mod:`grader.judge.program`): that the kernels computed the results and
PyTorch only allocated, viewed and summed partial results, what ``ctx`` saved, and the output
and both gradients against PyTorch autograd of the spec.
"""
from __future__ import annotations

import math

import torch

from grader.judge import failures, program as programs, saved_tensors
from grader.channel import wire
from grader.judge.compare import compare_tensor, recognise
from grader.course.dtypes import DTYPES, dtype_name
from grader.judge.fence import Buffer, pack
from grader.judge.grade import PuzzleGrader, Unanswered, Unstood, case_result, describe_case, failed_case
from grader.judge.plan import case_seed, row_gaps_look_alike
from grader.course.limits import refusal
from grader.course.puzzle import Case
from grader.judge.results import CaseResult, FailureKind
from grader.judge.sampled import Stands, chain_stands



# What a case the interpreter cannot afford says (Case.interpreted): it passed what was checked.
NOT_INTERPRETED = ("recorded, its launches checked against a GPU's limits; not run in the interpreter, whose "
                   "programs run one after another, and where no sample of them can stand for the rest: a later "
                   "step reads what every program wrote (a GPU grades its values)")


def refused_launch(program: wire.Program) -> "failures.LaunchRefused | None":
    """The first recorded launch a GPU would refuse (its grid, its num_warps), as it would raise."""
    for step in program.launches():
        warps = step.kwargs.get("num_warps")
        for grid in step.grids:
            why = refusal(grid, warps if isinstance(warps, int) else None)
            if why is not None:
                return failures.LaunchRefused(f"your {step.phase}'s launch of `{step.kernel.path[-1]}`", why,
                                              step.line, step.source)
    return None

class FunctionGrader(PuzzleGrader):
    """Same life cycle as a kernel puzzle (load, stub check, cases); each case recorded, then replayed."""

    compile_beside = False  # each launch the wrapper made compiles beside the replays (_compile_launches)

    def grade(self):
        self._inputs: dict[str, list[torch.Tensor]] = {}
        self.worker.warm |= {"fake_tensors"}  # the recording's: warmed once in the zygote, before its fork
        return super().grade()

    def _run_cases(self, params) -> list:
        """Record every case in this puzzle's first worker, then replay them in a fresh one."""
        recorded: dict[str, tuple] = {}
        results: dict[str, CaseResult] = {}
        self.failed_first = None
        abort = None
        for case in self.puzzle.cases:
            if abort is not None:
                results[case.label] = failed_case(case, self.puzzle, failures.Skipped(abort))
                continue
            outcome, abort = self._record(case, self._plan(case))
            (results if isinstance(outcome, CaseResult) else recorded)[case.label] = outcome
        self.worker.recycle()  # the replays run in a worker that never ran the wrapper
        large = self._large_labels()  # compiled as the small cases are
        # The launches compile beside the replays; a case whose launch does not compile fails so,
        # whatever its replay gave.
        compiling = self._beside(self._compile_launches,
                                 [r[-1].program for label, r in recorded.items() if label not in large])
        try:
            for case in self.puzzle.cases:
                if case.label not in recorded:
                    continue
                if abort is not None:
                    results[case.label] = failed_case(case, self.puzzle, failures.Skipped(abort))
                    continue
                results[case.label], abort = self._replay_case(case, recorded[case.label])
                if not results[case.label].passed and self.failed_first is None:
                    self.failed_first = case.label
                self._tell(results[case.label])
        finally:
            compiled = compiling.result()
        for case in self.puzzle.cases:
            if case.label not in recorded:
                continue
            program = recorded[case.label][-1].program
            keys = (programs.launch_key(step, program) for step in program.launches())
            failed = next((compiled[key] for key in keys if compiled.get(key)), None)
            if failed is not None:
                results[case.label] = failed_case(case, self.puzzle, failed, describe_case(case, self.puzzle))
        return [results[case.label] for case in self.puzzle.cases]

    def _compile_launches(self, recorded: list[wire.Program]) -> dict:
        """In the interpreter, every distinct launch the wrapper made is compiled for sm_90 too, as
        a kernel puzzle's kernel is: a kernel that runs only as Python fails here. Returns, per
        launch, the failure found (None where it compiles)."""
        verdicts: dict[str, failures.LaunchCompile | failures.CheckUnfinished | None] = {}
        if self.compiler is None:
            return verdicts
        with self._checker_session() as compiler:
            for program in recorded:
                for step in program.launches():
                    key = programs.launch_key(step, program)
                    if key is None or key in verdicts:
                        continue
                    verdicts[key] = self._compile_one(step, program, compiler)
        return verdicts

    def _compile_one(self, step: wire.Step, program: wire.Program, compiler):
        typed = lambda value: programs.typed_argument(value, program)  # noqa: E731
        arguments, keywords = [typed(a) for a in step.args], {k: typed(v) for k, v in step.kwargs.items()}
        if step.compiled:  # the handle took every parameter in order; warmup's values were compiled
            keywords.update({k: typed(v) for k, v in step.options.items()})
        name = ".".join(step.kernel.path)
        message = wire.Compile(file=str(self.kernel_file), kernel=name, signature={}, constexprs={}, values={},
                               path=step.kernel.path, hops=step.kernel.hops, arguments=arguments, keywords=keywords,
                               stage="ttgir")
        try:
            reply, _ = self._ask(message, timeout=max(60.0, self.options.timeout), worker=compiler)
        except Unanswered as unanswered:
            return failures.CheckUnfinished(unanswered.cause, name)
        if not isinstance(reply, wire.Failure):
            return None
        return failures.LaunchCompile(name, step.line, step.source, reply.config,
                                      failures.CompileFailed(reply.error, reply.line, reply.source))

    def _sniffing(self) -> str | None:
        """The wrapper must not be able to tell its recording from real use, nor its kernels
        the interpreter from a GPU: both are read, never run."""
        from grader.source import sniffing, wrapper_check
        finding = wrapper_check.check_file(self.kernel_file, self.puzzle.kernel)
        if finding is not None:
            return wrapper_check.message(finding)
        finding = sniffing.check_file(self.kernel_file, None)
        return None if finding is None else sniffing.message(finding)

    # ---- planning and recording --------------------------------------------------------------
    def _plan(self, case: Case):
        """The case's inputs, the spec's output and gradients, and grad_output, as fenced buffers."""
        plan = self.shapes.plan(case, self.options.secret)
        self._inputs[case.label] = plan.inputs  # for the variant look-alikes, should the output be wrong
        inputs = [x.clone().requires_grad_(x.is_floating_point()) for x in plan.inputs]
        output = self.puzzle.run_spec(inputs, {**self.puzzle.sizes(case), **case.blocks})
        gen = torch.Generator().manual_seed(case_seed(self.puzzle, case, self.options.secret) + 1)
        grad_output = torch.randn(output.shape, generator=gen, dtype=output.dtype)
        output.backward(grad_output)
        expected = [plan.expected[0], *(x.grad for x in inputs)]
        buffers = [*plan.buffers[:len(plan.inputs)],
                   Buffer.plan("grad_output", "input", dtype_name(grad_output), tuple(grad_output.shape),
                               len(plan.inputs), case.layouts.get("grad_output", "contiguous"))]
        blobs = [pack(b, x) for b, x in zip(buffers, [*plan.inputs, grad_output])]
        return expected, buffers, blobs

    def _record(self, case: Case, planned):
        """(the planned case and its program, None) or (the case's failed result, why the rest is skipped)."""
        expected, buffers, blobs = planned
        describe = describe_case(case, self.puzzle)
        specs = tuple(b.spec() for b in buffers)
        try:
            reply, _ = self._ask(wire.Record(file=str(self.kernel_file), kernel=self.puzzle.kernel, buffers=specs))
        except Unanswered as unanswered:
            result, _, abort = self._unanswered_case(case, describe, unanswered)
            return result, abort
        if isinstance(reply, wire.Failure) or reply.failure is not None:
            failure = reply if isinstance(reply, wire.Failure) else reply.failure
            extra = {} if isinstance(reply, wire.Failure) else {"seconds": reply.seconds, "printed": reply.printed}
            if not isinstance(reply, wire.Failure) and reply.host is not None:
                h = reply.host
                host = failures.HostValues(h.phase, h.op, h.line, h.source, h.file, h.escaped)
                return failed_case(case, self.puzzle, host, describe, **extra), None
            kind, text, abort = self._case_failure(failure)
            if kind == FailureKind.EXCEPTION and not isinstance(reply, wire.Failure):  # the wrapper's own code
                text = failures.word(failures.Raised(failure.error, failure.line, failure.source,
                                                     raiser=f"your {reply.phase}"))
            return (case_result(case, self.puzzle, False, kind, f"{describe}: {text}", **extra),
                    f"{case.label} {abort}" if abort else None)
        refused = refused_launch(reply.program)
        if refused is not None:  # a launch a GPU would refuse: known before anything runs
            return failed_case(case, self.puzzle, refused, describe, seconds=reply.seconds), None
        return (expected, buffers, blobs, reply), None

    # ---- replaying and judging ---------------------------------------------------------------
    def _replay_case(self, case: Case, recorded: tuple):
        """(the case's result, why the remaining cases are not run or None). A large case in the
        interpreter replays a sample of each launch's programs first (grader.sandbox.chain_sampling);
        where no sample stands, every program, or (a case the interpreter cannot afford) none."""
        cpu = self.options.device == "cpu"
        why = ""
        if case.large and cpu and self.options.check_bounds and not self.puzzle.dependent:
            sampled = self._replay(case, *recorded, hooks=True, sample=True)
            if not isinstance(sampled[0], Unstood):
                return sampled
            why = sampled[0].why
            if case.interpreted and self.failed_first is not None:
                skipped = failures.Skipped(f"its sample does not stand for its launches ({why}), so all "
                                           f"{sampled[0].programs} of their programs would run in the interpreter, "
                                           f"and case {self.failed_first} already failed: fix that one first")
                return failed_case(case, self.puzzle, skipped, describe_case(case, self.puzzle)), None
        if not case.interpreted and cpu:  # recorded and checked, not run
            said = NOT_INTERPRETED + (f" (no sample stands: {why})" if why else "")
            return case_result(case, self.puzzle, True, message=said, seconds=recorded[-1].seconds), None
        return self._hooks_if_failed(case, lambda hooks: self._replay(case, *recorded, hooks=hooks))

    def _sampled(self, reply: wire.Replayed, case: Case):
        """A sampled replay's verdict: the elements to compare (Stands), a program that read another's
        store (ReadAcrossLaunch), or why no sample stands (Unstood)."""
        chain = reply.sampled
        if chain.foreign_reads:
            read = chain.foreign_reads[0]
            return failures.ReadAcrossLaunch(read.tensor, tuple(read.program), read.index, read.line, read.source)
        if not chain.launches:
            return Unstood("; ".join(chain.falls) or "a sample would run most of the programs", chain.programs)
        names = [self.puzzle.outputs[0], *(f"grad_{s.name}" for s in self.shapes.inputs)]
        names = [name if info.tensor else "" for name, info in zip(names, reply.returned)]
        judged = chain_stands(names, [info.shape for info in reply.returned], chain)
        return judged if isinstance(judged, Stands) else Unstood(judged, chain.programs)

    def _replay(self, case: Case, expected, buffers, blobs, recorded: wire.Recorded, hooks: bool = True,
                sample: bool = False):
        """(the case's result, why the remaining cases are not run or None); with ``sample`` (a sample
        of each launch's programs), (Unstood, None) where it does not stand."""
        program = recorded.program
        seconds, printed = recorded.seconds, recorded.printed
        finding_checked = False
        for config in range(program.replays()):
            describe = describe_case(case, self.puzzle)
            message = wire.Replay(file=str(self.kernel_file), program=program, buffers=tuple(
                b.spec() for b in buffers), config=config,
                check_bounds=hooks, allocator=self.options.device == "cuda",
                sample=case_seed(self.puzzle, case, self.options.secret) if sample else None)
            try:
                reply, raw = self._ask(message, blobs)
                if isinstance(reply, wire.Replayed) and len(raw) != reply.blobs_expected():
                    self._malformed(wire.WireError(f"{len(raw)} blobs for {reply.blobs_expected()} tensors"))
            except Unanswered as unanswered:
                result, _, abort = self._unanswered_case(case, describe, unanswered)
                return result, abort
            if isinstance(reply, wire.Replayed):
                seconds += reply.seconds
                printed += reply.printed
                describe += f" with {reply.label}" if reply.label else ""
            extra = {"seconds": seconds, "printed": printed}
            fail = lambda facts: (failed_case(case, self.puzzle, facts, describe, **extra), None)  # noqa: E731
            failure = reply if isinstance(reply, wire.Failure) else reply.failure
            if failure is not None:
                kind, text, abort = self._case_failure(failure)
                result = case_result(case, self.puzzle, False, kind, f"{describe}: {text}", **extra)
                return result, (f"{case.label} {abort}" if abort else None)
            if reply.disagrees:
                return fail(failures.ReplayDisagrees(reply.disagrees))
            masks = None
            if sample:
                judged = self._sampled(reply, case) if reply.sampled is not None else \
                    Unstood("the worker ran every program", 0)
                if isinstance(judged, Unstood):
                    return judged, None
                if not isinstance(judged, Stands):
                    return fail(judged)
                masks = judged.masks
                describe += f" ({judged.ran} of its {judged.programs} programs run)"
            if not finding_checked:  # the replay has checked what the recording claims: now read it
                finding = self._read_program(program, case)
                if finding is not None:
                    return fail(finding.facts)
                finding_checked = True
            verdict = self._check_values(reply, raw, expected, case, masks)
            if verdict is not None:
                return fail(verdict)
            stray = self._checked_beside(message, blobs, case)
            if stray is not None:
                return fail(stray)
        return case_result(case, self.puzzle, True, seconds=seconds, printed=printed), None

    def _read_program(self, program: wire.Program, case: Case):
        names = [s.name for s in self.shapes.inputs]
        wants = [DTYPES[s.dtype].is_float for s in self.shapes.inputs]
        finding = programs.check(program, names, self.puzzle.outputs[0], wants, dict(self.puzzle.host_reductions))
        if finding is not None:
            return finding
        saved = self._check_saved(program, case)
        return None if saved is None else programs.Finding(saved)

    def _check_values(self, reply: wire.Replayed, raw: list[bytes], expected, case: Case, masks=None):
        """The first wrong value among the output and the gradients, or None. ``masks``: a sampled
        replay's known elements per name; the others are taken as the spec's."""
        blobs = iter(raw)
        got = [self._tensor(d, next(blobs)) if d.tensor else None for d in reply.returned]
        if not got:
            self._malformed(wire.WireError("a replay that returned nothing"))
        if masks:
            names = [self.puzzle.outputs[0], *(f"grad_{s.name}" for s in self.shapes.inputs)]
            got = [_known(t, masks.get(name), want) for t, name, want in zip(got, names, expected)]
        verdict = self._check_output(self.puzzle.outputs[0], got[0], reply.returned[0], expected[0])
        if verdict is not None and verdict.kind in (FailureKind.MISMATCH, FailureKind.NONFINITE):
            verdict = self._another_students(verdict, case, got[0])
        if verdict is None:
            verdict = self._check_grads(got[1:], reply.returned[1:], expected[1:])
        return verdict

    def _another_students(self, verdict, case: Case, output: torch.Tensor):
        """The verdict, with a look-alike's note where the wrong output is the spec's with
        another value of one of the puzzle's variants: a file written for another student."""
        gaps = row_gaps_look_alike(self.puzzle, case)  # x a slice with gaps between its rows
        looks = self.puzzle.variant_look_alikes() + ((gaps,) if gaps is not None else ())
        inputs = self._inputs.get(case.label)
        if not looks or inputs is None:
            return verdict
        atol, rtol = self.puzzle.tolerance(dtype_name(output))
        expected = self.puzzle.run_spec([x.clone() for x in inputs], {**self.puzzle.sizes(case), **case.blocks})
        look = recognise(looks, inputs, (expected.detach(),), (output,), atol, rtol,
                         {**self.puzzle.variant_values, **self.puzzle.sizes(case), **case.blocks}, case.layouts)
        if look is None:
            return verdict
        return failures.LooksLike(verdict.kind, verdict, look)

    def _not_callable(self, failure: wire.Failure) -> failures.NotCallable:
        return failures.NotCallable(self.puzzle.kernel, function=True)

    def _bounds_dims(self, access: wire.OutOfBoundsAccess) -> tuple[str, ...]:
        return ()  # the wrapper's own tensors have no dims of the spec's

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

    def _check_output(self, name, got, described: wire.TensorInfo, expected):
        if got is None:
            return failures.NotATensor(described.type, tuple(expected.shape), dtype_name(expected))
        if tuple(got.shape) != tuple(expected.shape) or got.dtype != expected.dtype:
            return failures.WrongOutput(tuple(got.shape), described.dtype, tuple(expected.shape), dtype_name(expected))
        atol, rtol = self.puzzle.tolerance(dtype_name(expected))
        outcome = compare_tensor(name, got, expected, atol, rtol,
                                 on_gpu=self.options.device == "cuda", filled=False)
        return None if outcome.passed else outcome.facts

    def _check_saved(self, program: wire.Program, case: Case) -> "failures.CtxAttribute | failures.SavedExtra | None":
        return saved_tensors.check(program, self.puzzle, case, tuple(s.name for s in self.shapes.inputs))

    def _check_grads(self, got, described, expected):
        names = [s.name for s in self.shapes.inputs]
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
            atol, rtol = self.puzzle.tolerance(dtype_name(want))
            outcome = compare_tensor(label, tensor, want, atol, rtol,
                                     on_gpu=self.options.device == "cuda", filled=False)
            if not outcome.passed:
                return outcome.facts
        return None


def _known(got, mask, want):
    """``got`` with the elements a sampled replay does not know taken from ``want``."""
    if got is None or mask is None or want is None or got.shape != want.shape or mask.shape != got.shape:
        return got
    return torch.where(mask, got, want.to(got.dtype))
