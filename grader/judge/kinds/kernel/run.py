"""A kernel puzzle's case runner: each case's fenced buffers sent with the kernel's launch on the
puzzle's grid; what comes back compared here, with what a race, a property check or a known
mistake says about it.
"""
from __future__ import annotations

from dataclasses import dataclass

import msgspec

from grader.channel import wire
from grader.channel.binding import BindingError, Param
from grader.course.puzzle import Case
from grader.course.puzzle_parts import Run
from grader.judge import early_reads, failures, properties
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
    spec_dims,
    unanswered_case,
)
from grader.judge.compare import compare, recognise, written_outputs
from grader.judge.failures import FailureKind
from grader.judge.fence import pack
from grader.judge.kinds.kernel.wrong import race as find_race
from grader.judge.kinds.kernel.wrong import wrong
from grader.judge.plan import CasePlan
from grader.source.source_lines import kernel_traits


def zeros(buffer):
    """A zero tensor of ``buffer``'s shape and dtype."""
    import torch
    return torch.zeros(buffer.shape, dtype=getattr(torch, buffer.dtype))


@dataclass(frozen=True)
class Planned:
    """A case made ready to send: its plan, its words, the launch and the buffers' bytes."""

    plan: CasePlan
    describe: str
    message: wire.Run
    blobs: list


@dataclass(frozen=True)
class Sent:
    """A launch's reply that the worker did not fail: the runs and their bytes, and what the result carries."""

    reply: wire.Ran
    raw: list
    describe: str  # the case's words, with the config an autotuned kernel ran
    extra: dict    # the case result's seconds and printed output


class KernelRunner(CaseRunner):
    """The cases of a ``@triton.jit`` kernel, in one pass."""

    def __init__(self, state: PuzzleState) -> None:
        super().__init__(state)
        self.beside = BoundsBeside(state, lambda access: spec_dims(state, access))
        self.last_trace: dict | None = None

    # ---- the life cycle's steps --------------------------------------------------------------
    def sniff(self) -> str | None:
        """Kernels that tell the interpreter from a GPU are refused before anything runs."""
        from grader.source.sniffing import check_file, message
        finding = check_file(self.state.kernel_file, self.puzzle.kernel)
        return None if finding is None else message(finding)

    def run(self, case: Case, carried=None) -> CaseOutcome:
        params = [Param(p.name, p.constexpr) for p in self.info.params]
        return self.run_case(case, params)

    def traced(self, case: Case, params: list[Param]):
        self.last_trace = None
        outcome = self.run_case(case, params, trace=True)
        return outcome.result, self.last_trace, ""

    # ---- a case ------------------------------------------------------------------------------
    def run_case(self, case: Case, params: list[Param], trace: bool = False) -> CaseOutcome:
        """A large case runs in the interpreter without the bounds hooks, which cost more than the
        kernel; only when it fails does it run again with them, so that a stray access is named."""
        if trace:
            return self.run_once(case, params, True, self.options.check_bounds)
        return hooks_if_failed(self.state, case, lambda hooks: self.run_once(case, params, False, hooks))

    def run_once(self, case: Case, params: list[Param], trace: bool, hooks: bool,
                 capture: list | None = None) -> CaseOutcome:
        """The case's outcome: planned, sent, judged. ``capture``: a rerun of a property check, whose
        inputs and outputs are kept there, not judged."""
        planned = self._plan(case, params, trace, hooks)
        if isinstance(planned, CaseOutcome):  # the case's values do not bind to the kernel's parameters
            return planned
        sent = self._send(case, planned)
        if isinstance(sent, CaseOutcome):  # no reply to judge, or the worker's failure
            return sent
        return self._judge(case, params, hooks, planned, sent, capture)

    def _plan(self, case: Case, params: list[Param], trace: bool, hooks: bool) -> Planned | CaseOutcome:
        """The case's inputs and fenced buffers, bound to the kernel's parameters, as a launch to send."""
        state, puzzle = self.state, self.puzzle
        plan = state.shapes.plan(case, self.options.secret)
        describe = describe_case(case, puzzle)
        try:
            binding = state.bind(params, [b.name for b in plan.buffers], plan.values, self.info)
        except BindingError as exc:
            unbound = failures.Worded(FailureKind.SIGNATURE, str(exc))
            return CaseOutcome(failed_case(case, puzzle, unbound, describe), "the signature is wrong")
        blobs = [pack(b, x) for b, x in zip(plan.buffers, plan.inputs)] + [
            pack(b, zeros(b) if b.name in puzzle.zeroed else None) for b in plan.output_buffers]
        message = wire.Run(file=str(state.kernel_file), kernel=puzzle.kernel, puzzle_file=str(state.puzzle_path),
                           values=dict(plan.values), named=dict(binding.named), check_bounds=hooks,
                           reorder=hooks or not case.large,  # a race shows in the small cases
                           serial=self.options.serial_interpreter,
                           trace=trace, allocator="make_tensor_descriptor" in puzzle.requires,
                           buffers=tuple(b.spec(p) for b, p in zip(plan.buffers, binding.pointers)))
        return Planned(plan, describe, message, blobs)

    def _send(self, case: Case, planned: Planned) -> Sent | CaseOutcome:
        """The launch sent; its reply, or the case's outcome where there is none to judge (no reply,
        the worker's failure). Keeps the trace, for the pictures."""
        state, buffers = self.state, planned.plan.buffers
        try:
            reply, raw = state.ask(planned.message, planned.blobs)
            if isinstance(reply, wire.Ran) and len(raw) != reply.blobs_expected(len(buffers)):
                state.malformed(wire.WireError(f"{len(raw)} blobs for {len(reply.runs)} run(s) of "
                                               f"{len(buffers)} buffers"))
            if isinstance(reply, wire.Ran) and any(len(b) != buffer.total for b, buffer in
                                                   zip(raw, buffers * len(reply.runs))):
                state.malformed(wire.WireError("a buffer came back with a different size"))
        except Unanswered as unanswered:
            return unanswered_case(case, self.puzzle, planned.describe, unanswered, self.options.device == "cpu")
        head = reply.head if isinstance(reply, wire.Ran) else None
        # The pictures read the trace as the JSON it came as: plain dicts and lists.
        self.last_trace = msgspec.json.decode(msgspec.json.encode(head.trace)) \
            if head is not None and head.trace is not None else None
        extra = {"seconds": head.seconds, "printed": head.printed} if head is not None else \
            {"seconds": 0.0, "printed": ""}
        describe = planned.describe
        if head is not None and head.label:  # an autotuned kernel, graded config by config in the interpreter
            describe = f"{describe} with {head.label}"
        failure = reply if isinstance(reply, wire.Failure) else head.failure
        if failure is not None:
            return reported_case(state, case, failure, describe, **extra)
        return Sent(reply, raw, describe, extra)

    def _judge(self, case: Case, params: list[Param], hooks: bool, planned: Planned, sent: Sent,
               capture: list | None) -> CaseOutcome:
        """The runs' values (one run per autotuning config), then what no value shows: a race, a stray
        access beside a GPU, a result that depends on what the outputs held before."""
        puzzle, plan, extra = self.puzzle, planned.plan, sent.extra
        runs, n = sent.reply.runs, len(plan.buffers)
        results = [sent.raw[i * n:(i + 1) * n] for i in range(len(sent.raw) // n)]
        worst = 0.0
        index = -1  # which of the runs in order (one per autotuning config): a rerun's outputs are matched by it
        for run, got in zip(runs, results):
            if run.reversed:
                continue
            index += 1
            if capture is not None:
                capture.append((plan.inputs, written_outputs(plan.buffers, got, len(plan.inputs), puzzle.host_reduce)))
                continue
            judged = self._values(case, params, hooks, plan, run, got, index, extra)
            if isinstance(judged, CaseOutcome):
                return judged
            worst = max(worst, judged)
        race = find_race(plan, runs, results)
        if race is not None:
            return CaseOutcome(failed_case(case, puzzle, race, sent.describe, **extra))
        beside = msgspec.structs.replace(planned.message, reorder=False, check_bounds=True, accesses_only=True)
        stray = self.beside.checked(beside, planned.blobs, case)
        if stray is not None:
            return CaseOutcome(failed_case(case, puzzle, stray, sent.describe, **extra))
        refilled = None if capture is not None else early_reads.refilled(
            self.state, case, plan, planned.message, planned.blobs, sent.reply, sent.raw, sent.describe, extra)
        if refilled is not None:  # a passing case whose result changed with what its outputs held before
            return refilled
        crossed = any(launch.crossed for run in runs for launch in run.launches)
        return CaseOutcome(case_result(case, puzzle, True, max_abs_err=worst, **extra), crossed=crossed)

    def _values(self, case: Case, params: list[Param], hooks: bool, plan: CasePlan, run, got, index: int,
                extra: dict) -> CaseOutcome | float:
        """One run's outputs against the spec's (or the puzzle's property check, with its reruns):
        the failed outcome, or the largest error of a passing run."""
        puzzle = self.puzzle
        where = describe_case(case, puzzle) + (f" with {run.label}" if run.label else "")
        expected = plan.expected if puzzle.check is None else properties.expected(
            puzzle.check, {**puzzle.sizes(case), **case.blocks}, plan.inputs,
            written_outputs(plan.buffers, got, len(plan.inputs), puzzle.host_reduce))
        outcome = compare(plan.buffers, got, plan.inputs, expected, puzzle.tolerance,
                          large_inputs=self._large_inputs(case), on_gpu=self.options.device == "cuda",
                          host_reduce=puzzle.host_reduce)
        if not outcome.passed:
            kind, text = wrong(self.puzzle, case, plan, got, run, outcome)
            return CaseOutcome(case_result(case, puzzle, False, kind, f"{where}: {text}",
                                           max_abs_err=outcome.max_abs_err, **extra))
        if puzzle.check is not None:
            verdict = self._properties(case, params, hooks, plan, got, index)
            if isinstance(verdict, CaseOutcome):  # a rerun that failed on its own (a crash, a timeout)
                return verdict
            if verdict is not None:
                return CaseOutcome(failed_case(case, puzzle, verdict, where, **extra))
        return outcome.max_abs_err or 0.0

    def _large_inputs(self, case: Case) -> failures.LargeInputs | None:
        """A case of scaled-up inputs, with what the kernel does that its message may speak of."""
        if case.scale <= 1:
            return None
        loops, exponentiates = kernel_traits(self.state.source(), self.puzzle.kernel)
        return failures.LargeInputs(case.scale, exponentiates=exponentiates, loops=loops)

    def _properties(self, case: Case, params: list[Param], hooks: bool, plan, got, index: int):
        """A property check's verdict on the case's run ``index`` and its reruns: None, the facts of
        what they show wrong (with a look-alike's note), or a rerun's failed outcome. A pass that
        matches a correct alternative leaves its note in the state's ``notes``."""
        puzzle, notes = self.puzzle, self.state.notes
        check, values = puzzle.check, {**puzzle.sizes(case), **case.blocks}
        outputs = written_outputs(plan.buffers, got, len(plan.inputs), puzzle.host_reduce)
        runs = [Run(values, tuple(plan.inputs), tuple(outputs))]
        for overrides in check.reruns(values):  # a large case's too: the puzzle says which it needs
            again = properties.rerun_case(case, overrides)
            kept: list = []
            # A launch whose accesses the first run checked (a dropout's forty seeds) runs without the
            # hooks, and again with them only where it fails, as a large case does.
            hooked = hooks and self._launch(again) != self._launch(case)
            rerun = self.run_once(again, params, False, hooked, capture=kept)
            if not rerun.result.passed and hooks and not hooked:
                kept = []
                rerun = self.run_once(again, params, False, True, capture=kept)
            if not rerun.result.passed:
                return rerun
            inputs_again, outputs_again = kept[min(index, len(kept) - 1)]
            runs.append(Run({**puzzle.sizes(again), **again.blocks}, tuple(inputs_again), tuple(outputs_again)))
        facts = properties.judged(puzzle, runs)
        atol, rtol = map(max, zip(*(puzzle.tolerance(b.dtype) for b in plan.output_buffers)))
        sizes = {**puzzle.variant_values, **values}
        if facts is None:  # the small cases name a stream as well: a large case's alternatives would cost seconds
            said = "" if case.large else properties.note(check, plan.inputs, outputs, plan.expected, sizes,
                                                         case.layouts, atol, rtol)
            if said and said not in notes:
                notes.append(said)
            return None
        look = recognise(puzzle.look_alikes, plan.inputs, plan.expected, outputs, atol, rtol, sizes,
                         case.layouts) if puzzle.look_alikes else None
        return facts if look is None else failures.LooksLike(facts.kind, facts, look)

    def _launch(self, case: Case) -> tuple:
        """What a launch's accesses follow: its grid, its blocks and its tensors' shapes (not a seed)."""
        dims, shapes = {**self.puzzle.sizes(case), **case.blocks}, self.state.shapes
        return (self.puzzle.launch_grid(case), sorted(case.blocks.items()),
                [shapes.buffer_dims(spec).shape(dims) for spec in shapes.all])
