"""A kernel puzzle's case runner: each case's fenced buffers sent with the kernel's launch on the
puzzle's grid; what comes back compared here, with what a race, a property check or a known
mistake says about it.
"""
from __future__ import annotations


import msgspec

from grader.channel import wire
from grader.channel.binding import BindingError, Param
from grader.course.puzzle import Case
from grader.course.puzzle_parts import Run
from grader.judge import early_reads, failures, properties
from grader.judge.asking import Unanswered
from grader.judge.bounds_beside import BoundsBeside
from grader.judge.case_run import (CaseOutcome, case_result, describe_case, failed_case, hooks_if_failed,
                                   load_request, missing_apis, reported_case, spec_dims, unanswered_case)
from grader.judge.compare import compare, look_alike_note, order_changed, recognise, written_outputs
from grader.judge.fence import pack
from grader.judge.plan import row_gaps_look_alike
from grader.judge.results import FailureKind
from grader.source.source_lines import kernel_traits


def zeros(buffer):
    """A zero tensor of ``buffer``'s shape and dtype."""
    import torch
    return torch.zeros(buffer.shape, dtype=getattr(torch, buffer.dtype))


class KernelRunner:
    """The cases of a ``@triton.jit`` kernel, in one pass."""

    def __init__(self, grader) -> None:
        self.grader, self.puzzle, self.options = grader, grader.puzzle, grader.options
        self.beside = BoundsBeside(grader, lambda access: spec_dims(grader, access))
        self.last_trace: dict | None = None

    # ---- the life cycle's steps --------------------------------------------------------------
    def unsupported(self) -> str | None:
        return missing_apis(self.puzzle)

    def sniff(self) -> str | None:
        """Kernels that tell the interpreter from a GPU are refused before anything runs."""
        from grader.source.sniffing import check_file, message
        finding = check_file(self.grader.kernel_file, self.puzzle.kernel)
        return None if finding is None else message(finding)

    def load_request(self):
        return load_request(self.grader)

    def loaded(self, info, failure):
        return info, failure

    def cases(self) -> list[Case]:
        return list(self.puzzle.cases)

    def run(self, case: Case, carried=None) -> CaseOutcome:
        params = [Param(p.name, p.constexpr) for p in self.grader.info.params]
        return self.run_case(case, params)

    def next_pass(self, carried: dict, aborted: bool) -> list[Case]:
        return []

    def settle(self, results: dict) -> None:
        pass

    def pass_note(self) -> str:
        return ""

    def finish(self, result):
        return result

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
        return hooks_if_failed(self.grader, case, lambda hooks: self.run_once(case, params, False, hooks))

    def run_once(self, case: Case, params: list[Param], trace: bool, hooks: bool,
                 capture: list | None = None) -> CaseOutcome:
        """The case's outcome. ``capture``: a rerun of a property check, whose inputs and outputs are
        kept there, not judged."""
        grader, puzzle = self.grader, self.puzzle
        plan = grader.shapes.plan(case, self.options.secret)
        describe = describe_case(case, puzzle)
        try:
            binding = grader.bind(params, [b.name for b in plan.buffers], plan.values)
        except BindingError as exc:
            unbound = failures.Worded(FailureKind.SIGNATURE, str(exc))
            return CaseOutcome(failed_case(case, puzzle, unbound, describe), "the signature is wrong")
        blobs = [pack(b, x) for b, x in zip(plan.buffers, plan.inputs)] + [
            pack(b, zeros(b) if b.name in puzzle.zeroed else None) for b in plan.output_buffers]
        message = wire.Run(file=str(grader.kernel_file), kernel=puzzle.kernel, puzzle_file=str(grader.puzzle_path),
                           values=dict(plan.values), named=dict(binding.named), check_bounds=hooks,
                           reorder=hooks or not case.large,  # a race shows in the small cases
                           serial=self.options.serial_interpreter,
                           trace=trace, allocator="make_tensor_descriptor" in puzzle.requires,
                           buffers=tuple(b.spec(p) for b, p in zip(plan.buffers, binding.pointers)))
        try:
            reply, raw = grader.ask(message, blobs)
            if isinstance(reply, wire.Ran) and len(raw) != reply.blobs_expected(len(plan.buffers)):
                grader.malformed(wire.WireError(f"{len(raw)} blobs for {len(reply.runs)} run(s) of "
                                                f"{len(plan.buffers)} buffers"))
            if isinstance(reply, wire.Ran) and any(len(b) != buffer.total for b, buffer in
                                                   zip(raw, plan.buffers * len(reply.runs))):
                grader.malformed(wire.WireError("a buffer came back with a different size"))
        except Unanswered as unanswered:
            return unanswered_case(case, puzzle, describe, unanswered, self.options.device == "cpu")

        head = reply.head if isinstance(reply, wire.Ran) else None
        # The pictures read the trace as the JSON it came as: plain dicts and lists.
        self.last_trace = msgspec.json.decode(msgspec.json.encode(head.trace)) \
            if head is not None and head.trace is not None else None
        extra = {"seconds": head.seconds, "printed": head.printed} if head is not None else \
            {"seconds": 0.0, "printed": ""}
        if head is not None and head.label:  # an autotuned kernel, graded config by config in the interpreter
            describe = f"{describe} with {head.label}"
        failure = reply if isinstance(reply, wire.Failure) else head.failure
        if failure is not None:
            return reported_case(grader, case, failure, describe, **extra)

        runs = reply.runs
        n = len(plan.buffers)
        results = [raw[i * n:(i + 1) * n] for i in range(len(raw) // n)]
        worst = 0.0
        index = -1  # which of the runs in order (one per autotuning config): a rerun's outputs are matched by it
        for run, got in zip(runs, results):
            if run.reversed:
                continue
            index += 1
            if capture is not None:
                capture.append((plan.inputs, written_outputs(plan.buffers, got, len(plan.inputs), puzzle.host_reduce)))
                continue
            where = describe_case(case, puzzle) + (f" with {run.label}" if run.label else "")
            expected = plan.expected if puzzle.check is None else properties.expected(
                puzzle.check, {**puzzle.sizes(case), **case.blocks}, plan.inputs,
                written_outputs(plan.buffers, got, len(plan.inputs), puzzle.host_reduce))
            outcome = compare(plan.buffers, got, plan.inputs, expected, puzzle.tolerance,
                              large_inputs=self._large_inputs(case), on_gpu=self.options.device == "cuda",
                              host_reduce=puzzle.host_reduce)
            if not outcome.passed:
                kind, text = self._wrong(case, plan, got, run, outcome)
                return CaseOutcome(case_result(case, puzzle, False, kind, f"{where}: {text}",
                                               max_abs_err=outcome.max_abs_err, **extra))
            worst = max(worst, outcome.max_abs_err or 0.0)
            if puzzle.check is not None:
                verdict = self._properties(case, params, hooks, plan, got, index)
                if isinstance(verdict, CaseOutcome):  # a rerun that failed on its own (a crash, a timeout)
                    return verdict
                if verdict is not None:
                    return CaseOutcome(failed_case(case, puzzle, verdict, where, **extra))
        race = self._race(plan, runs, results)
        if race is not None:
            return CaseOutcome(failed_case(case, puzzle, race, describe, **extra))
        beside = msgspec.structs.replace(message, reorder=False, check_bounds=True, accesses_only=True)
        stray = self.beside.checked(beside, blobs, case)
        if stray is not None:
            return CaseOutcome(failed_case(case, puzzle, stray, describe, **extra))
        refilled = self._refilled(case, plan, message, blobs, reply, raw, describe, extra) if capture is None else None
        if refilled is not None:
            return refilled
        crossed = any(launch.crossed for run in runs for launch in run.launches)
        return CaseOutcome(case_result(case, puzzle, True, max_abs_err=worst, **extra), crossed=crossed)

    def _refilled(self, case: Case, plan, message, blobs, reply, raw, describe: str, extra) -> CaseOutcome | None:
        """A passing case whose programs read an output before storing to it, run again with other
        values in its unwritten outputs: a failed outcome where the result changed (early_reads)."""
        return early_reads.refilled(self.grader, case, plan, message, blobs, reply, raw, describe, extra)

    def _wrong(self, case: Case, plan, got, run, outcome) -> tuple[FailureKind, str]:
        """What wrong values say: read before they were written, a known mistake, a strided input's gaps."""
        early = [r for r in run.early_reads if r.tensor in outcome.message
                 and r.tensor not in self.puzzle.zeroed]  # a zeroed output may be read at once
        text = outcome.message
        if early and outcome.kind in (FailureKind.UNWRITTEN, FailureKind.NONFINITE, FailureKind.MISMATCH):
            read = early[0]
            text = failures.word(failures.ReadEarly(outcome.kind, read.tensor, read.program, read.index,
                                                    read.shape, read.line, read.source))
        kind = outcome.kind
        if outcome.kind in (FailureKind.MISMATCH, FailureKind.NONFINITE) and text == outcome.message:
            text = self._look_alike(case, plan, got, outcome)
        gaps = self._gap_fill(case, plan, got, outcome) if text == outcome.message else None
        if gaps is not None:
            kind, text = gaps.kind, failures.word(gaps)
        return kind, text

    def _large_inputs(self, case: Case) -> failures.LargeInputs | None:
        """A case of scaled-up inputs, with what the kernel does that its message may speak of."""
        if case.scale <= 1:
            return None
        loops, exponentiates = kernel_traits(self.grader.source(), self.puzzle.kernel)
        return failures.LargeInputs(case.scale, exponentiates=exponentiates, loops=loops)

    def _properties(self, case: Case, params: list[Param], hooks: bool, plan, got, index: int):
        """A property check's verdict on the case's run ``index`` and its reruns: None, the facts of
        what they show wrong (with a look-alike's note), or a rerun's failed outcome. A pass that
        matches a correct alternative leaves its note in the grader's ``notes``."""
        puzzle, notes = self.puzzle, self.grader.notes
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
        dims, shapes = {**self.puzzle.sizes(case), **case.blocks}, self.grader.shapes
        return (self.puzzle.launch_grid(case), sorted(case.blocks.items()),
                [shapes.buffer_dims(spec).shape(dims) for spec in shapes.all])

    def _look_alike(self, case: Case, plan, got, outcome) -> str:
        """The outcome's message, with "It looks like <name>: <where>." when the wrong values are
        those of a known mistake. A NaN the mistake explains needs no general advice on NaN: the
        note replaces it."""
        puzzle, message = self.puzzle, outcome.message
        # Another student's value of a constant first: a file written for them is the likelier story.
        looks = puzzle.variant_look_alikes() + tuple(puzzle.look_alikes)
        if not looks:
            return message
        actual = written_outputs(plan.buffers, got, len(plan.inputs), puzzle.host_reduce)
        # The loosest of the outputs' tolerances: a look-alike is a hint, not a verdict.
        atol, rtol = map(max, zip(*(puzzle.tolerance(b.dtype) for b in plan.output_buffers)))
        look = recognise(looks, plan.inputs, plan.expected, actual, atol, rtol,
                         {**puzzle.variant_values, **puzzle.sizes(case), **case.blocks}, case.layouts)
        return message if look is None else look_alike_note(outcome.finding or message, look)

    def _gap_fill(self, case: Case, plan, got, outcome) -> "failures.LooksLike | None":
        """Elements "never written" that a kernel reading between a strided input's rows wrote: they
        hold the fill the gaps hold. Then the values are wrong, and the look-alike says where."""
        puzzle = self.puzzle
        if outcome.kind != FailureKind.UNWRITTEN or not isinstance(outcome.facts, failures.Unwritten):
            return None
        look = row_gaps_look_alike(puzzle, case, kernel=True)
        if look is None:
            return None
        actual = written_outputs(plan.buffers, got, len(plan.inputs), puzzle.host_reduce)
        atol, rtol = map(max, zip(*(puzzle.tolerance(b.dtype) for b in plan.output_buffers)))
        if recognise((look,), plan.inputs, plan.expected, actual, atol, rtol,
                     {**puzzle.variant_values, **puzzle.sizes(case), **case.blocks}, case.layouts) is None:
            return None
        f = outcome.facts
        return failures.LooksLike(FailureKind.MISMATCH, failures.GapFill(f.name, f.count, f.total, f.first), look)

    @staticmethod
    def _race(plan, runs, results) -> "failures.Overlap | failures.OrderDependent | failures.ReadAcross | None":
        """Two programs storing different values to one element, a result that changes when the
        programs run in the other order, or a program loading what another stores (where no atomic
        could order them): on a GPU the outcome depends on timing."""
        for run in runs:
            if run.overlaps:
                overlap = run.overlaps[0]
                return failures.Overlap(overlap.tensor, overlap.programs, overlap.index, overlap.shape, overlap.line,
                                        overlap.source)
        reversed_runs = [(r, got) for r, got in zip(runs, results) if r.reversed]
        if reversed_runs:
            run, got = reversed_runs[0]
            for buffer, a, b in list(zip(plan.buffers, results[0], got))[len(plan.inputs):]:
                if a != b:
                    from grader.judge.fence import unpack
                    before, after = unpack(buffer, a)[0], unpack(buffer, b)[0]
                    return order_changed(buffer.name, before, after)
        crossing = next((run.crossings[0] for run in runs if run.crossings and not run.atomics), None)
        if crossing is None:
            return None
        return failures.ReadAcross(crossing.tensor, tuple(crossing.program), tuple(crossing.other), crossing.index,
                                   tuple(crossing.shape), crossing.loaded, crossing.line, crossing.source)
