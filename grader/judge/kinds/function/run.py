"""An autograd puzzle's case runner: the learner's ``torch.autograd.Function`` around their kernels.

The wrapper never sees data. For each case one worker runs its forward and backward on tensors
that have the case's shapes, strides and dtypes but no values, and records what they do as a
program (:mod:`grader.sandbox.kinds.function.record`): the first pass. A second worker, forked fresh
after the first has ended, replays the program on the real inputs: PyTorch's operators and the
learner's kernels, no other learner code (:mod:`grader.sandbox.kinds.function.replay`); once per
autotuning config, where a launched kernel has several: the second pass. Beside the replays each
distinct launch is compiled for sm_90; a case whose launch does not compile fails so. The verdict
comes from the replay and from reading the program here (:mod:`grader.judge.kinds.function.check`).
"""
from __future__ import annotations

import torch

import grader.judge.kinds.function.program as programs
from grader.channel import wire
from grader.channel.kinds import function as function_wire
from grader.course.dtypes import dtype_name
from grader.course.puzzle import Case
from grader.judge import failures
from grader.judge.asking import Unanswered
from grader.judge.bounds_beside import BoundsBeside
from grader.judge.case_run import (
    CaseOutcome,
    CaseRunner,
    PuzzleState,
    case_result,
    describe_case,
    failed_case,
    hooks_if_failed,
    reported_case,
    unanswered_case,
)
from grader.judge.fence import Buffer, pack
from grader.judge.kinds.function.check import check_values, read_program, refused_launch
from grader.judge.plan import case_seed


class FunctionRunner(CaseRunner):
    """Each case recorded (the first pass), then replayed in a fresh worker (the second)."""

    def __init__(self, state: PuzzleState) -> None:
        super().__init__(state)
        self.inputs: dict[str, list[torch.Tensor]] = {}  # each case's, for the variant look-alikes
        self.recorded: dict[str, tuple] | None = None    # once the recordings are done
        self.compiling = None  # the launches' compile beside the replays (a Future of their verdicts)
        self.beside = BoundsBeside(state, _no_dims)
        self.not_callable = failures.NotCallable(self.puzzle.kernel, function=True)

    # ---- the life cycle's steps --------------------------------------------------------------
    def sniff(self) -> str | None:
        """The wrapper must not be able to tell its recording from real use, nor its kernels
        the interpreter from a GPU: both are read, never run."""
        from grader.source import sniffing, wrapper_check
        finding = wrapper_check.check_file(self.state.kernel_file, self.puzzle.kernel)
        if finding is not None:
            return wrapper_check.message(finding)
        finding = sniffing.check_file(self.state.kernel_file, None)
        return None if finding is None else sniffing.message(finding)

    def run(self, case: Case, recorded) -> CaseOutcome:
        if recorded is None:
            return self._record(case, self._plan(case))
        return self._replay_case(case, recorded)

    def next_pass(self, carried: dict, aborted: bool) -> list[Case]:
        """After the recordings, the replays: in a worker that never ran the wrapper, with the
        launches (those of the small cases: the large ones' are theirs at other sizes) compiling beside."""
        if self.recorded is not None:
            return []
        self.recorded = carried
        self.state.worker.recycle()
        large = {case.label for case in self.puzzle.cases if case.large}
        self.compiling = self.state.beside(self._compile_launches,
                                            [r[-1].program for label, r in carried.items() if label not in large])
        return [case for case in self.puzzle.cases if case.label in carried]

    def settle(self, results: dict) -> None:
        """A case whose launch does not compile fails so, whatever its replay gave."""
        if self.compiling is None:
            return
        compiled = self.compiling.result()
        for case in self.puzzle.cases:
            if case.label not in self.recorded:
                continue
            program = self.recorded[case.label][-1].program
            keys = (programs.launch_key(step, program) for step in program.launches())
            failed = next((compiled[key] for key in keys if compiled.get(key)), None)
            if failed is not None:
                results[case.label] = failed_case(case, self.puzzle, failed, describe_case(case, self.puzzle))

    # ---- the launches, compiled for sm_90 -----------------------------------------------------
    def _compile_launches(self, recorded: list[function_wire.Program]) -> dict:
        """In the interpreter, every distinct launch the wrapper made is compiled for sm_90 too, as
        a kernel puzzle's kernel is: a kernel that runs only as Python fails here. Returns, per
        launch, the failure found (None where it compiles)."""
        verdicts: dict[str, failures.LaunchCompile | failures.CheckUnfinished | None] = {}
        if self.state.compiler is None:
            return verdicts
        with self.state.checker_session() as compiler:
            for program in recorded:
                for step in program.launches():
                    key = programs.launch_key(step, program)
                    if key is None or key in verdicts:
                        continue
                    verdicts[key] = self._compile_one(step, program, compiler)
        return verdicts

    def _compile_one(self, step: function_wire.Step, program: function_wire.Program, compiler):
        typed = lambda value: programs.typed_argument(value, program)  # noqa: E731
        arguments, keywords = [typed(a) for a in step.args], {k: typed(v) for k, v in step.kwargs.items()}
        if step.compiled:  # the handle took every parameter in order; warmup's values were compiled
            keywords.update({k: typed(v) for k, v in step.options.items()})
        name = ".".join(step.kernel.path)
        message = wire.Compile(file=str(self.state.kernel_file), kernel=name, signature={}, constexprs={}, values={},
                               path=step.kernel.path, hops=step.kernel.hops, arguments=arguments, keywords=keywords,
                               stage="ttgir")
        try:
            reply, _ = self.state.ask(message, timeout=max(60.0, self.options.timeout), worker=compiler)
        except Unanswered as unanswered:
            return failures.CheckUnfinished(unanswered.cause, name)
        if not isinstance(reply, wire.Failure):
            return None
        return failures.LaunchCompile(name, step.line, step.source, reply.config,
                                      failures.CompileFailed(reply.error, reply.line, reply.source))

    # ---- planning and recording --------------------------------------------------------------
    def _plan(self, case: Case):
        """The case's inputs, the spec's output and gradients, and grad_output, as fenced buffers."""
        puzzle = self.puzzle
        plan = self.state.shapes.plan(case, self.options.secret)
        self.inputs[case.label] = plan.inputs  # for the variant look-alikes, should the output be wrong
        inputs = [x.clone().requires_grad_(x.is_floating_point()) for x in plan.inputs]
        output = puzzle.run_spec(inputs, {**puzzle.sizes(case), **case.blocks})
        gen = torch.Generator().manual_seed(case_seed(puzzle, case, self.options.secret) + 1)
        grad_output = torch.randn(output.shape, generator=gen, dtype=output.dtype)
        output.backward(grad_output)
        expected = [plan.expected[0], *(x.grad for x in inputs)]
        buffers = [*plan.buffers[:len(plan.inputs)],
                   Buffer.plan("grad_output", "input", dtype_name(grad_output), tuple(grad_output.shape),
                               len(plan.inputs), case.layouts.get("grad_output", "contiguous"))]
        blobs = [pack(b, x) for b, x in zip(buffers, [*plan.inputs, grad_output])]
        return expected, buffers, blobs

    def _record(self, case: Case, planned) -> CaseOutcome:
        """The case carried to its replay with its program, or its failed result (told at the end only)."""
        expected, buffers, blobs = planned
        describe = describe_case(case, self.puzzle)
        specs = tuple(b.spec() for b in buffers)
        try:
            reply, _ = self.state.ask(function_wire.Record(file=str(self.state.kernel_file), kernel=self.puzzle.kernel,
                                                   buffers=specs))
        except Unanswered as unanswered:
            return _untold(unanswered_case(case, self.puzzle, describe, unanswered))
        if isinstance(reply, wire.Failure) or reply.failure is not None:
            failure = reply if isinstance(reply, wire.Failure) else reply.failure
            extra = {} if isinstance(reply, wire.Failure) else {"seconds": reply.seconds, "printed": reply.printed}
            if not isinstance(reply, wire.Failure) and reply.host is not None:
                h = reply.host
                host = failures.HostValues(h.phase, h.op, h.line, h.source, h.file, h.escaped)
                return CaseOutcome(failed_case(case, self.puzzle, host, describe, **extra), tell=False)
            raiser = None if isinstance(reply, wire.Failure) else f"your {reply.phase}"  # the wrapper's own code
            return reported_case(self.state, case, failure, describe, self.not_callable, _no_dims, raiser=raiser,
                                 tell=False, **extra)
        refused = refused_launch(reply.program)
        if refused is not None:  # a launch a GPU would refuse: known before anything runs
            return CaseOutcome(failed_case(case, self.puzzle, refused, describe, seconds=reply.seconds), tell=False)
        return CaseOutcome(carried=(expected, buffers, blobs, reply))

    # ---- replaying and judging ---------------------------------------------------------------
    def _replay_case(self, case: Case, recorded: tuple) -> CaseOutcome:
        """The case replayed: every program of every launch (batched in the interpreter)."""
        return hooks_if_failed(self.state, case, lambda hooks: self._replay(case, *recorded, hooks=hooks))

    def _replay(self, case: Case, expected, buffers, blobs, recorded: function_wire.Recorded,
                hooks: bool = True) -> CaseOutcome:
        """The case replayed, once per autotuning config."""
        state, puzzle = self.state, self.puzzle
        program = recorded.program
        seconds, printed = recorded.seconds, recorded.printed
        finding_checked = False
        crossed = False
        for config in range(program.replays()):
            describe = describe_case(case, puzzle)
            message = function_wire.Replay(file=str(state.kernel_file), program=program, buffers=tuple(
                b.spec() for b in buffers), config=config,
                check_bounds=hooks, allocator=self.options.device == "cuda",
                serial=self.options.serial_interpreter)
            try:
                reply, raw = state.ask(message, blobs)
                if isinstance(reply, function_wire.Replayed) and len(raw) != reply.blobs_expected():
                    state.malformed(wire.WireError(f"{len(raw)} blobs for {reply.blobs_expected()} tensors"))
            except Unanswered as unanswered:
                return unanswered_case(case, puzzle, describe, unanswered, self.options.device == "cpu")
            if isinstance(reply, function_wire.Replayed):
                crossed |= any(launch.crossed for launch in reply.launches)
                seconds += reply.seconds
                printed += reply.printed
                describe += f" with {reply.label}" if reply.label else ""
            extra = {"seconds": seconds, "printed": printed}
            fail = lambda facts: CaseOutcome(failed_case(case, puzzle, facts, describe, **extra))  # noqa: E731
            failure = reply if isinstance(reply, wire.Failure) else reply.failure
            if failure is not None:
                return reported_case(state, case, failure, describe, self.not_callable, _no_dims, **extra)
            if reply.disagrees:
                return fail(failures.ReplayDisagrees(reply.disagrees))
            if not finding_checked:  # the replay has checked what the recording claims: now read it
                finding = read_program(state, program, case)
                if finding is not None:
                    return fail(finding.facts)
                finding_checked = True
            verdict = check_values(state, reply, raw, expected, case, self.inputs.get(case.label))
            if verdict is not None:
                return fail(verdict)
            stray = self.beside.checked(message, blobs, case)
            if stray is not None:
                return fail(stray)
        return CaseOutcome(case_result(case, puzzle, True, seconds=seconds, printed=printed), crossed=crossed)


def _no_dims(access) -> tuple[str, ...]:
    """An access's tensor's dims in a wrapper's words: none (its own tensors have no dims of the spec's)."""
    return ()


def _untold(outcome: CaseOutcome) -> CaseOutcome:
    """A recording's failure: on_case sees the replays' results only."""
    return CaseOutcome(outcome.result, outcome.abort, tell=False)
