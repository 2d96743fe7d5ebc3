"""Grading one puzzle: build inputs, have a worker run the kernel, decide each case here.

The puzzle's definition (spec, cases, tolerances) always comes from the course's own puzzle
file; only the kernel comes from the learner's file, and only the worker imports it.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path

import msgspec

from grader.judge import failures, messages, properties
from grader.channel import wire
from grader.channel.kinds import function as function_wire
from grader.channel.binding import BindingError, Param, bind
from grader.course.case import draw
from grader.judge.compare import compare, look_alike_note, order_changed, recognise, written_outputs
from grader.course.loader import Course, stub_signature
from grader.judge.fence import pack
from grader.judge.options import Options
from grader.judge.plan import SpecShapes, case_seed, row_gaps_look_alike
from grader.judge.sampled import Stands, stands
from grader.course.puzzle import Case, Puzzle, Run
from grader.course.variant import shown
from grader.judge.results import CaseResult, CheckResult, FailureKind, PuzzleResult, Status, most_telling
from grader.source import variant_code
from grader.source.source_lines import imports_torch, kernel_code
from grader.channel.worker_pool import CompileChecker, WorkerDied, WorkerProcess, WorkerTimedOut

# Where a kernel puzzle's compile check stops: through LLVM, where Triton rejects what is not
# Triton and lowers every operation for sm_90. ptxas, a third of the time, can only reject PTX
# that Triton did not write itself (inline assembly) or a register cap: those compile to the end.
COMPILE_STAGE = "llir"
NEEDS_ASSEMBLER = ("inline_asm", "maxnreg")
# How the worker reports the interpreter's refusal of a block's truth (`and` between masks:
# sandbox.interpreter.limits.BlockTruth): the learner's mistake on every device, found beside a GPU too.
BLOCK_TRUTH = "BlockTruth:"


@dataclass(frozen=True)
class Unstood:
    """Why a large case's sample does not stand for its launch, and how many programs the launch has:
    the case then runs whole (grader.judge.sampled)."""

    why: str
    programs: int


class Unanswered(Exception):
    """A request the worker gave no reply to judge: it timed out, died, or sent what its
    request does not allow. ``facts`` are the learner's failure (``kind`` and ``text`` from
    them); ``cause`` names what happened; the remaining cases are not run (``abort`` says why)."""

    def __init__(self, facts: "failures.Timeout | failures.Crash", cause: str, seconds: float = 0.0) -> None:
        text = failures.word(facts)
        super().__init__(text)
        self.facts, self.kind, self.text, self.cause, self.seconds = facts, facts.kind, text, cause, seconds
        self.abort = failures.stops(facts.kind)


def case_result(case: Case, puzzle: Puzzle, passed: bool, kind=None, message="", **extra) -> CaseResult:
    return CaseResult(name=case.name, sizes=puzzle.sizes(case), blocks=dict(case.blocks), seed=case.seed,
                      grid=puzzle.launch_grid(case), passed=passed, kind=kind, message=messages.tidy(message),
                      **extra)


def failed_case(case: Case, puzzle: Puzzle, facts, describe: str = "", **extra) -> CaseResult:
    """A failing case's result: the kind and message of the facts found, after ``describe``."""
    text = failures.word(facts)
    return case_result(case, puzzle, False, facts.kind, f"{describe}: {text}" if describe else text, **extra)


def zeros(buffer):
    """A zero tensor of ``buffer``'s shape and dtype."""
    import torch
    return torch.zeros(buffer.shape, dtype=getattr(torch, buffer.dtype))


def describe_case(case: Case, puzzle: Puzzle) -> str:
    sizes = ", ".join(f"{k}={v}" for k, v in {**puzzle.sizes(case), **case.blocks}.items())
    return f"case {case.label} ({sizes})"


class PuzzleGrader:
    # Whether the named kernel's GPU compile check runs beside the cases, no case counting until it
    # passes (where a compile checker is given): a kind that compiles otherwise says False.
    compile_beside = True
    decorator = "@triton.jit"  # what the expected signature is written with, in messages
    # The first case that failed (set as the cases run): a large case whose sample does not stand is
    # then not run whole (minutes in the interpreter, for a puzzle that already fails).
    failed_first: str | None = None

    def __init__(self, course: Course, puzzle_id: str, kernel_file: Path, worker: WorkerProcess,
                 options: Options, compiler: "CompileChecker | None" = None, bounds: WorkerProcess | None = None,
                 on_case=None) -> None:
        self.course = course
        self.on_case = on_case  # sees each case's result as soon as it is known (the command line's first failure)
        self.notes: list[str] = []  # said beside a pass: a property check's correct alternative
        self.puzzle_path = course.puzzle_file(puzzle_id)
        # A batch's student gets their own values of the puzzle's free constants (Variant).
        puzzle = course.puzzle_for(puzzle_id, options.secret, options.student)
        # With a batch's secret, each case's varied sizes are drawn from it (Case.vary).
        self.puzzle = replace(puzzle, cases=tuple(draw(c, puzzle.id, options.secret) for c in puzzle.cases))
        self.kernel_file = Path(kernel_file).resolve()
        self.worker = worker
        self.compiler = compiler
        self.bounds = bounds  # on a GPU: the interpreter, where each case runs again with its accesses checked
        self.options = options
        self.shapes = SpecShapes(self.puzzle)
        self.expected_signature = stub_signature(str(self.puzzle_path), self.puzzle.kernel)
        self.last_trace: dict | None = None
        self._unchecked: failures.BesideUnchecked | None = None  # why the check beside a GPU could not run
        self.info: wire.Loaded | None = None

    # ---- the one way to ask the worker and read its reply -----------------------------------
    def _ask(self, message: wire.Request, blobs=(), timeout: float | None = None, worker=None):
        """Send ``message``; returns its reply (``message.REPLY`` or a ``wire.Failure``) and blobs.
        A timeout, a dead worker and a malformed reply raise :class:`Unanswered`."""
        timeout = self.options.timeout if timeout is None else timeout
        try:
            return (worker or self.worker).request(message, blobs, timeout=timeout)
        except WorkerTimedOut as timed:
            raise Unanswered(failures.Timeout(timeout, wall=timed.wall), "WorkerTimedOut",
                             seconds=timed.wall or timeout) from None
        except WorkerDied as died:
            raise self._died(died) from None

    def _died(self, died: WorkerDied) -> Unanswered:
        return Unanswered(failures.Crash(died.returncode, died.stderr_tail, self.options.device, died.corrupted),
                          "WorkerDied")

    def _malformed(self, error: Exception):
        """A reply that passed the wire's checks but does not fit its request (too few blobs,
        bytes of the wrong size): the worker's failure, as any malformed reply."""
        try:
            self.worker.malformed(error)
        except WorkerDied as died:
            raise self._died(died) from None

    def _case_failure(self, failure: wire.Failure) -> tuple[FailureKind, str, str | None]:
        """A case's failure as the worker reported it: (kind, text, why the remaining cases are
        not run or None, from the catalogue: a crash, or the interpreter's limit, which the cases after
        it would meet too). Kernel and autograd puzzles share it."""
        kind = failures.reported(failure.kind)
        if kind == FailureKind.OUT_OF_BOUNDS:
            facts = failures.Worded(kind, messages.out_of_bounds(failure.access,
                                                                 self._bounds_dims(failure.access)))
        elif kind == FailureKind.EXCEPTION:
            facts = failures.Raised(failure.error, failure.line, failure.source)
        elif kind == FailureKind.COMPILE:
            facts = failures.CompileFailed(failure.error, failure.line, failure.source, on_gpu=True)
        elif kind == FailureKind.INTERPRETER_LIMIT:  # a kernel puzzle's cases run once its GPU compile check passed
            facts = failures.InterpreterLimit(failure.error, failure.line, failure.source, self.puzzle.id,
                                              self.compiler is not None and self.compile_beside)
        elif kind == FailureKind.CRASH:
            self.worker.kill()
            facts = failures.Crash(None, failure.error, self.options.device)
        elif kind == FailureKind.SIGNATURE:
            facts = self._not_callable(failure)
        else:
            raise RuntimeError(f"worker error: {failure.error}")
        return kind, failures.word(facts), failures.stops(kind)

    def _bounds_dims(self, access: wire.OutOfBoundsAccess) -> tuple[str, ...]:
        specs = {s.name: self.shapes.buffer_dims(s) for s in self.shapes.all}
        spec = specs.get(access.tensor)
        return spec.dims if spec else ()

    def _not_callable(self, failure: wire.Failure) -> failures.NotCallable:
        return failures.NotCallable(self.puzzle.kernel, failure.reason)

    def _unanswered_case(self, case: Case, describe: str, unanswered: Unanswered, binding=None):
        """(CaseResult, binding, why the remaining cases are not run), as ``_run_case`` returns."""
        return (case_result(case, self.puzzle, False, unanswered.kind, f"{describe}: {unanswered.text}",
                            seconds=unanswered.seconds), binding, f"{case.label} {unanswered.abort}")

    def result(self, status: Status | str, message: str, cases=(), checks=None, started: float = 0.0) -> PuzzleResult:
        return PuzzleResult(puzzle=self.puzzle.id, title=self.puzzle.title, status=status,
                            source=str(self.kernel_file), device=self.options.device, cases=tuple(cases),
                            checks=checks or {}, message=messages.tidy(message),
                            seconds=time.perf_counter() - started if started else 0.0,
                            variant=self.variant_used())

    def variant_used(self) -> dict[str, str]:
        """The values of the puzzle's variants this grading used, where a student's were chosen."""
        if not self.puzzle.chosen:
            return {}
        return {name: shown(value) for name, value in self.puzzle.variant_values.items()}

    def grade(self) -> PuzzleResult:
        """The puzzle's result. Its learner code runs in workers of its own: a fresh one at the
        start, ended at the end, so that nothing of another puzzle's reaches this one's."""
        started = time.perf_counter()
        workers = [w for w in (self.worker, self.bounds) if w is not None]
        for worker in workers:
            worker.recycle()
        try:
            return self._grade(started)
        except Exception as exc:  # a bug in the grader or the course, never the learner's fault
            import traceback
            return self.result(Status.ERROR, f"grader error: {type(exc).__name__}: {exc}\n"
                               + traceback.format_exc(limit=6), started=started)
        finally:
            for worker in workers:
                worker.recycle()

    def _load(self):
        """Ask the worker about the kernel. Returns (wire.Loaded, None) or (None, failure result).
        A timeout or a dead worker raises Unanswered."""
        reply, _ = self._ask(*self._load_request())
        if isinstance(reply, wire.Loaded):
            return reply, None
        kind = failures.reported(reply.kind)
        name, file = self.puzzle.kernel, self.kernel_file.name
        if kind == FailureKind.NOT_FOUND:
            facts = failures.NoKernel(name, file, tuple(reply.defined), self.expected_signature, self.decorator)
            dropped = self._why_dropped(name)
            if dropped is not None:
                facts = failures.Dropped(name, file, dropped.line, dropped.text, dropped.reason,
                                         self.expected_signature, self.decorator)
        elif kind == FailureKind.SIGNATURE:
            facts = failures.NotCallable(name, reply.reason)
        elif kind == FailureKind.EXCEPTION:
            facts = failures.ImportFailed(file, reply.error, reply.line, reply.source)
        else:
            return None, self.result(Status.ERROR, f"worker error while loading: {reply.error}")
        message = failures.word(facts)
        return None, self.result(Status.FAIL, message, checks={"load": CheckResult(False, message, kind)})

    def _load_request(self) -> tuple[wire.Load, tuple, float | None]:
        """The Load request, its blobs and its timeout (None: the grade's): the object says its kind."""
        return wire.Load(file=str(self.kernel_file), kernel=self.puzzle.kernel), (), None

    def _why_dropped(self, name: str):
        from grader.source.definitions import why_dropped
        try:
            return why_dropped(self.kernel_file.read_text(encoding="utf-8"), name)
        except (OSError, UnicodeDecodeError):
            return None

    def _sniffing(self) -> str | None:
        """Kernels that tell the interpreter from a GPU are refused before anything runs."""
        from grader.source.sniffing import check_file, message
        finding = check_file(self.kernel_file, self.puzzle.kernel)
        return None if finding is None else message(finding)

    def _machine_refusal(self) -> str | None:
        """Where the bounds check beside a GPU cannot run on this machine: the refusal, with its fix."""
        if self.bounds is None:
            return None
        from grader.judge import machine
        fault = machine.interpreter_fault()
        return None if fault is None else machine.refusal(fault)

    def _unsupported(self) -> str | None:
        """Why this puzzle cannot run on the installed Triton, if it cannot."""
        from grader.course import apis
        missing = apis.missing(self.puzzle.requires)
        return apis.unsupported_message(missing[0], self.puzzle.instead) if missing else None

    def _grade(self, started: float) -> PuzzleResult:
        unsupported = self._unsupported()
        if unsupported is not None:
            return self.result(Status.UNSUPPORTED, unsupported, started=started)
        refused = self._machine_refusal()
        if refused is not None:
            return self.result(Status.UNSUPPORTED, refused, started=started)
        sniffed = self._sniffing()
        if sniffed is not None:
            return self.result(Status.FAIL, sniffed,
                               checks={"sniffing": CheckResult(False, sniffed, FailureKind.SNIFFING)}, started=started)
        try:
            info, failure = self._load()
        except Unanswered as unanswered:
            facts = replace(unanswered.facts, importing=True) if unanswered.kind == FailureKind.TIMEOUT \
                else unanswered.facts
            message = failures.word(facts)
            return self.result(Status.FAIL, message, checks={"load": CheckResult(False, message, unanswered.kind)},
                               started=started)
        if failure is not None:
            return failure
        if info.stub:
            return self.result(Status.NOT_ATTEMPTED, f"not attempted: `{self.puzzle.kernel}` is still the stub",
                               started=started)
        params = [Param(p.name, p.constexpr) for p in info.params]
        self.info = info

        checks = {}
        # What would not compile for a GPU is not Triton, and the interpreter would run it as plain
        # Python: the check runs beside the cases, and no case counts until it has passed.
        compiling = self._compile_beside(params) if self.compiler is not None and self.compile_beside else None
        try:
            cases = self._run_cases(params)
        finally:
            compiled = compiling.result() if compiling is not None else None  # never left running
        if compiled is not None:
            checks["gpu_compile"] = compiled
            if not compiled.passed:  # the cases that ran are shown beside it; none counts
                return self.result(Status.FAIL, compiled.message, cases, checks, started)
        failed = [c for c in cases if not c.passed] + [c for c in checks.values() if not c.passed]
        if not failed:
            notes = "".join(f"\n{said}" for said in self.notes)
            return self.result(Status.PASS, f"all {len(cases)} cases pass{notes}", cases, checks, started)
        undecided = failed[0].kind == FailureKind.INTERPRETER_LIMIT  # the interpreter's limit: grade it on a GPU
        shown = failed[0] if undecided else most_telling(failed)
        notes = self._mistake_notes()
        index = next((i for i, c in enumerate(cases) if c is shown), None)
        if notes and index is not None:  # a known wrong turn: say so with the case shown
            cases[index] = shown = replace(shown, message=shown.message + notes)
        return self.result(Status.INTERPRETER_LIMIT if undecided else Status.FAIL, shown.message, cases, checks,
                           started)

    def _run_cases(self, params: list[Param]) -> list[CaseResult]:
        """Every case in order; after a crash or a timeout the rest are skipped."""
        cases: list[CaseResult] = []
        abort: str | None = None
        self.failed_first = None  # this grading's own
        for case in self.puzzle.cases:
            if abort is not None:
                cases.append(failed_case(case, self.puzzle, failures.Skipped(abort)))
                continue
            result, _, abort = self._run_case(case, params)
            cases.append(result)
            self._tell(result)
            if not result.passed and self.failed_first is None:
                self.failed_first = case.label
        return cases

    def traced(self, case: Case) -> tuple[CaseResult | None, dict | None, str]:
        """Run one case recording every access (interpreter only), for the memory-access pictures.

        Returns the case's result, the trace (None if the kernel never ran), and a note.
        """
        try:
            info, failure = self._load()
        except Unanswered as unanswered:
            return None, None, unanswered.text
        if failure is not None:
            return None, None, failure.message
        if info.stub:
            return None, None, "not attempted"
        params = [Param(p.name, p.constexpr) for p in info.params]
        self.info = info
        self.last_trace = None
        result, _, _ = self._run_case(case, params, trace=True)
        return result, self.last_trace, ""

    def _run_case(self, case: Case, params: list[Param], trace: bool = False):
        """Returns (CaseResult, Binding or None, reason to abort the remaining cases or None).
        A large case runs in the interpreter without the bounds hooks, which cost more than the
        kernel; only when it fails does it run again with them, so that a stray access is named."""
        if trace:
            return self._run_case_once(case, params, True, self.options.check_bounds)
        if case.large and self.puzzle.samples and self.options.check_bounds and self.options.device == "cpu":
            sampled = self._run_case_once(case, params, False, True, sample=True)
            if not isinstance(sampled, Unstood):
                return sampled
            if self.failed_first is not None:  # the puzzle fails already: its whole run would tell nothing sooner
                skipped = failures.Skipped(f"its sample does not stand for its launch ({sampled.why}), so all "
                                           f"{sampled.programs} of its programs would run in the interpreter, "
                                           f"and case {self.failed_first} already failed: fix that one first")
                return failed_case(case, self.puzzle, skipped, describe_case(case, self.puzzle)), None, None
            # else every program runs
        return self._hooks_if_failed(case, lambda hooks: self._run_case_once(case, params, False, hooks))

    def _hooks_if_failed(self, case: Case, run):
        """``run(hooks)``'s result, a tuple led by a CaseResult. A large case in the interpreter
        runs without the bounds hooks first, and with them only when it fails (a timeout is not
        run again): a wild access then fails as out_of_bounds, where it names the access."""
        hooks = self.options.check_bounds
        if not (case.large and hooks and self.options.device == "cpu"):
            return run(hooks)
        fast = run(False)
        if fast[0].passed or fast[0].kind == FailureKind.TIMEOUT:
            return fast
        checked = run(True)
        return fast if checked[0].passed else checked

    def _run_case_once(self, case: Case, params: list[Param], trace: bool, hooks: bool, capture: list | None = None,
                       sample: bool = False):
        """The case's result (see _run_case). ``capture``: a rerun of a property check, whose outputs
        are kept there, not judged. With ``sample``, a sample of the programs runs
        (grader.judge.sampled), and Unstood comes back where it does not stand for the launch."""
        plan = self.shapes.plan(case, self.options.secret)
        describe = describe_case(case, self.puzzle)
        try:
            binding = self._bind(params, [b.name for b in plan.buffers], plan.values)
        except BindingError as exc:
            unbound = failures.Worded(FailureKind.SIGNATURE, str(exc))
            return failed_case(case, self.puzzle, unbound, describe), None, "the signature is wrong"
        blobs = [pack(b, x) for b, x in zip(plan.buffers, plan.inputs)] + [
            pack(b, zeros(b) if b.name in self.puzzle.zeroed else None) for b in plan.output_buffers]
        message = wire.Run(file=str(self.kernel_file), kernel=self.puzzle.kernel, puzzle_file=str(self.puzzle_path),
                           values=dict(plan.values), named=dict(binding.named), check_bounds=hooks,
                           reorder=(hooks or not case.large) and not sample,  # a race shows in the small cases
                           sample=case_seed(self.puzzle, case, self.options.secret) if sample else None,
                           trace=trace, allocator="make_tensor_descriptor" in self.puzzle.requires,
                           buffers=tuple(b.spec(p) for b, p in zip(plan.buffers, binding.pointers)))
        try:
            reply, raw = self._ask(message, blobs)
            if isinstance(reply, wire.Ran) and len(raw) != reply.blobs_expected(len(plan.buffers)):
                self._malformed(wire.WireError(f"{len(raw)} blobs for {len(reply.runs)} run(s) of "
                                               f"{len(plan.buffers)} buffers"))
            if isinstance(reply, wire.Ran) and any(len(b) != buffer.total for b, buffer in
                                                   zip(raw, plan.buffers * len(reply.runs))):
                self._malformed(wire.WireError("a buffer came back with a different size"))
        except Unanswered as unanswered:
            return self._unanswered_case(case, describe, unanswered, binding)

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
            kind, text, abort = self._case_failure(failure)
            return (case_result(case, self.puzzle, False, kind, f"{describe}: {text}", **extra), binding,
                    f"{case.label} {abort}" if abort else None)

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
                capture.append(written_outputs(plan.buffers, got, len(plan.inputs), self.puzzle.host_reduce))
                continue
            where = describe_case(case, self.puzzle) + (f" with {run.label}" if run.label else "")
            masks = None
            if run.sampled is not None:
                judged = self._sampled(plan, run.sampled)
                if isinstance(judged, Unstood):
                    return judged
                if not isinstance(judged, Stands):
                    return failed_case(case, self.puzzle, judged, where, **extra), binding, None
                masks, where = judged.masks, f"{where} ({judged.ran} of its {judged.programs} programs run)"
            expected = plan.expected if self.puzzle.check is None else properties.expected(
                self.puzzle.check, {**self.puzzle.sizes(case), **case.blocks}, plan.inputs,
                written_outputs(plan.buffers, got, len(plan.inputs), self.puzzle.host_reduce))
            outcome = compare(plan.buffers, got, plan.inputs, expected, self.puzzle.tolerance,
                              large_inputs=case.scale > 1, on_gpu=self.options.device == "cuda",
                              host_reduce=self.puzzle.host_reduce, sampled=masks)
            if not outcome.passed:
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
                return (case_result(case, self.puzzle, False, kind, f"{where}: {text}",
                                    max_abs_err=outcome.max_abs_err, **extra), binding, None)
            worst = max(worst, outcome.max_abs_err or 0.0)
            if self.puzzle.check is not None:
                verdict = self._properties(case, params, hooks, plan, got, index)
                if isinstance(verdict, tuple):  # a rerun that failed on its own (a crash, a timeout)
                    return verdict[0], binding, verdict[1]
                if verdict is not None:
                    return failed_case(case, self.puzzle, verdict, where, **extra), binding, None
        race = self._race(plan, runs, results)
        if race is not None:
            return failed_case(case, self.puzzle, race, describe, **extra), binding, None
        beside = msgspec.structs.replace(message, reorder=False, check_bounds=True, accesses_only=True)
        if case.large and self.puzzle.samples:  # a sample of its programs, as the interpreter grades it
            beside = msgspec.structs.replace(beside, sample=case_seed(self.puzzle, case, self.options.secret))
        stray = self._checked_beside(beside, blobs, case)
        if stray is not None:
            return failed_case(case, self.puzzle, stray, describe, **extra), binding, None
        return case_result(case, self.puzzle, True, max_abs_err=worst, **extra), binding, None

    def _properties(self, case: Case, params: list[Param], hooks: bool, plan, got, index: int):
        """A property check's verdict on the case's run ``index`` and its reruns: None, the facts of
        what they show wrong (with a look-alike's note), or (a rerun's failed result, why the rest
        is skipped). A pass that matches a correct alternative leaves its note in ``self.notes``."""
        check, values = self.puzzle.check, {**self.puzzle.sizes(case), **case.blocks}
        outputs = written_outputs(plan.buffers, got, len(plan.inputs), self.puzzle.host_reduce)
        runs = [Run(values, tuple(plan.inputs), tuple(outputs))]
        for overrides in () if case.large else check.reruns(values):  # a large case's reruns cost more than they tell
            again = properties.rerun_case(case, overrides)
            kept: list = []
            result, _, abort = self._run_case_once(again, params, False, hooks, capture=kept)
            if not result.passed:
                return result, abort
            runs.append(Run({**self.puzzle.sizes(again), **again.blocks}, tuple(plan.inputs),
                            tuple(kept[min(index, len(kept) - 1)])))
        facts = properties.judged(self.puzzle, runs)
        atol, rtol = map(max, zip(*(self.puzzle.tolerance(b.dtype) for b in plan.output_buffers)))
        sizes = {**self.puzzle.variant_values, **values}
        if facts is None:
            said = properties.note(check, plan.inputs, outputs, plan.expected, sizes, case.layouts, atol, rtol)
            if said and said not in self.notes:
                self.notes.append(said)
            return None
        look = recognise(self.puzzle.look_alikes, plan.inputs, plan.expected, outputs, atol, rtol, sizes,
                         case.layouts) if self.puzzle.look_alikes else None
        return facts if look is None else failures.LooksLike(facts.kind, facts, look)

    def _checked_beside(self, message: wire.Request, blobs, case: Case):
        """On a GPU, the case again in the interpreter, every load and store checked: a load out of
        bounds whose value is never used passes on a GPU, silently. The values are the GPU's to
        judge; here an access out of bounds fails, and so does ``and`` between blocks (refused on the
        CPU too). A run that could not finish, or raised what ran on the GPU, is a check missing:
        the case is neither passed nor failed (BesideUnchecked), never passed in silence.
        The facts found, or None."""
        sampled = getattr(message, "sample", None) is not None  # a large case, on a sample of its programs
        if self.bounds is None or (case.label in self._large_labels() and not sampled):  # the small ones find
            return None                                                                   # a stray load
        if self._unchecked is not None:  # it could not run for an earlier case: not tried again, said again
            return self._unchecked
        try:
            reply, _ = self._ask(message, blobs, worker=self.bounds)
        except Unanswered as unanswered:
            why = f"it did not finish within {unanswered.seconds:g} s" if unanswered.kind == FailureKind.TIMEOUT \
                else f"its worker died ({unanswered.text[:200]})"
            self._unchecked = failures.BesideUnchecked(f"{why} (in case {case.label})")
            return self._unchecked
        runs = reply.runs if isinstance(reply, wire.Ran) else [reply] if isinstance(reply, function_wire.Replayed) else []
        failure = next((r.failure for r in runs if r.failure is not None), reply if isinstance(reply, wire.Failure)
                       else None)
        if failure is None:
            across = next(filter(None, (_read_across(r.sampled) for r in runs
                                        if getattr(r, "sampled", None) is not None)), None)
            return None if across is None else failures.Worded(across.kind,
                                                                failures.word(across) + failures.READ_BESIDE)
        kind = failures.reported(failure.kind)
        if kind == FailureKind.OUT_OF_BOUNDS:
            return failures.Worded(kind, messages.out_of_bounds(
                failure.access, self._bounds_dims(failure.access)) + failures.FOUND_BESIDE)
        if kind == FailureKind.EXCEPTION and failure.error.startswith(BLOCK_TRUTH):  # refused on every device
            raised = failures.Raised(failure.error, failure.line, failure.source)
            return failures.Worded(kind, failures.word(raised) + failures.RAISED_BESIDE)
        if kind == FailureKind.EXCEPTION:  # what compiled and ran on the GPU, and the interpreter does not run
            self._unchecked = failures.BesideUnchecked(f"it raised {failure.error[:300]}", failure.line,
                                                       failure.source)
        elif kind == FailureKind.INTERPRETER_LIMIT:
            self._unchecked = failures.BesideUnchecked(f"it cannot run {failure.error}", failure.line, failure.source)
        else:
            what = failures.label(kind) if kind is not None else "error of the worker's own"
            self._unchecked = failures.BesideUnchecked(f"it ended in a {what} in case {case.label}: "
                                                       f"{(failure.error or failure.reason)[:300]}")
        return self._unchecked

    def _large_labels(self) -> set[str]:
        """The labels of the large cases: too large to run again in the interpreter beside a GPU, or
        to compile again for one (their launches are the small cases' at other sizes)."""
        return {case.label for case in self.puzzle.cases if case.large}

    def _look_alike(self, case: Case, plan, got, outcome) -> str:
        """The outcome's message, with "It looks like <name>: <where>." when the wrong values are
        those of a known mistake. A NaN the mistake explains needs no general advice on NaN: the
        note replaces it."""
        message = outcome.message
        # Another student's value of a constant first: a file written for them is the likelier story.
        looks = self.puzzle.variant_look_alikes() + tuple(self.puzzle.look_alikes)
        if not looks:
            return message
        actual = written_outputs(plan.buffers, got, len(plan.inputs), self.puzzle.host_reduce)
        # The loosest of the outputs' tolerances: a look-alike is a hint, not a verdict.
        atol, rtol = map(max, zip(*(self.puzzle.tolerance(b.dtype) for b in plan.output_buffers)))
        look = recognise(looks, plan.inputs, plan.expected, actual, atol, rtol,
                         {**self.puzzle.variant_values, **self.puzzle.sizes(case), **case.blocks}, case.layouts)
        return message if look is None else look_alike_note(outcome.finding or message, look)

    def _gap_fill(self, case: Case, plan, got, outcome) -> "failures.LooksLike | None":
        """Elements "never written" that a kernel reading between a strided input's rows wrote: they
        hold the fill the gaps hold. Then the values are wrong, and the look-alike says where."""
        if outcome.kind != FailureKind.UNWRITTEN or not isinstance(outcome.facts, failures.Unwritten):
            return None
        look = row_gaps_look_alike(self.puzzle, case, kernel=True)
        if look is None:
            return None
        actual = written_outputs(plan.buffers, got, len(plan.inputs), self.puzzle.host_reduce)
        atol, rtol = map(max, zip(*(self.puzzle.tolerance(b.dtype) for b in plan.output_buffers)))
        if recognise((look,), plan.inputs, plan.expected, actual, atol, rtol,
                     {**self.puzzle.variant_values, **self.puzzle.sizes(case), **case.blocks}, case.layouts) is None:
            return None
        f = outcome.facts
        return failures.LooksLike(FailureKind.MISMATCH, failures.GapFill(f.name, f.count, f.total, f.first), look)

    def _source(self) -> str:
        try:
            return self.kernel_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def _mistake_notes(self) -> str:
        source = self._source()
        if not source:
            return ""
        # The graded kernel and what it calls, without the statement's words or comments: another
        # puzzle's kernel in the same file is not this one's mistake.
        code = kernel_code(source, self.puzzle.kernel)
        return "".join(f"\nNote: {m.note}" for m in self.puzzle.mistakes if m.seen_in(code)) + self._variant_notes(source)

    def _variant_notes(self, source: str) -> str:
        """Where the file writes one of the puzzle's free constants (``Variant.code``) with a value
        that is not the student's: a file written for another student. Only where a student's values
        were chosen, as the variant look-alikes."""
        notes = []
        for variant in self.puzzle.variants if self.puzzle.chosen else ():
            written = variant_code.find(source, variant.code) if variant.code else None
            mine = self.puzzle.variant_values[variant.name]
            if written is None or written.value == mine:
                continue
            function, _, parameter = variant.code.rpartition(".")
            place = f"the default of `{parameter}` in `{function}`" if function else f"`{variant.code}`"
            notes.append(f"\nNote: {variant.what} is {shown(mine)} for you, as your statement says, "
                         f"but your file sets {place} to {shown(written.value)} (line {written.line}): "
                         f"write {shown(mine)} there.")
        return "".join(notes)

    @staticmethod
    def _sampled(plan, sampled: wire.SampledRun) -> "Stands | failures.ReadAcross | Unstood":
        """A sampled run: a program that read another's part fails it; else the elements to
        compare, or why the sample does not stand for the launch (grader.judge.sampled)."""
        across = _read_across(sampled)
        if across is not None:
            return across
        judged = stands(plan.buffers, len(plan.inputs), sampled)
        if isinstance(judged, Stands):
            return judged
        return Unstood(judged, sampled.programs)

    def _race(self, plan, runs, results) -> "failures.Overlap | failures.OrderDependent | None":
        """Two programs storing different values to one element, or a result that changes
        when the programs run in the other order: on a GPU the outcome depends on timing."""
        for run in runs:
            if run.overlaps:
                overlap = run.overlaps[0]
                return failures.Overlap(overlap.tensor, overlap.programs, overlap.index, overlap.shape, overlap.line,
                                        overlap.source)
        reversed_runs = [(r, got) for r, got in zip(runs, results) if r.reversed]
        if not reversed_runs:
            return None
        run, got = reversed_runs[0]
        first = results[0]
        for buffer, a, b in list(zip(plan.buffers, first, got))[len(plan.inputs):]:
            if a != b:
                from grader.judge.fence import unpack
                before, after = unpack(buffer, a)[0], unpack(buffer, b)[0]
                return order_changed(buffer.name, before, after)
        return None

    def _bind(self, params, pointer_names, values):
        info = self.info
        return bind(params, pointer_names, values, self.expected_signature,
                    provided=frozenset(info.provided if info else ()), defaults=dict(info.defaults) if info else {})

    def _tell(self, result: CaseResult) -> None:
        if self.on_case is not None:
            self.on_case(self.puzzle.id, result)

    def _compile_beside(self, params: list[Param]) -> Future:
        """The GPU compile check beside the cases; its CheckResult comes in the Future. Every case
        still runs to its end when it fails: which cases a cancel would reach depends on timing,
        and a report must not (a case is bounded by its timeout all the same)."""
        return self._beside(self._compile_check, params)

    def _beside(self, work, *args) -> Future:
        """``work(*args)`` on a thread of its own (the compile checker's requests, while this
        thread's worker runs cases); its result, or the exception it raised, comes in the Future."""
        future: Future = Future()

        def run() -> None:
            try:
                future.set_result(work(*args))
            except BaseException as exc:  # a grader bug: raised again where the result is awaited
                future.set_exception(exc)
        threading.Thread(target=run, name=f"compile check of {self.puzzle.id}", daemon=True).start()
        return future

    def _compile_check(self, params: list[Param]) -> CheckResult:
        """Compile for sm_90 once per distinct block configuration and dtypes, in a compile
        worker of this puzzle's own."""
        with self._checker_session() as compiler:
            return self._compile_each(params, compiler)

    def _checker_session(self):
        """The compile checker's worker for this puzzle. A file that imports torch (a learner's
        puzzle file does, for its spec) has the checker's zygote import it once, not each worker."""
        if imports_torch(self._source()):
            self.compiler.worker.warm |= {"torch"}
        return self.compiler.session()

    def _compiled(self, message: wire.Compile, compiler):
        """The compile checker's reply to ``message``: remembered by the file's digest and the
        request, so that a kernel checked again unchanged is not compiled again."""
        try:
            digest = hashlib.sha256(self.kernel_file.read_bytes()).hexdigest()
        except OSError:
            digest = None
        key = (digest, json.dumps({k: v for k, v in wire.header(message).items() if k != "file"}, sort_keys=True))
        known = self.compiler.verdicts.get(key) if digest is not None else None
        if known is None:
            known, _ = self._ask(message, timeout=max(60.0, self.options.timeout), worker=compiler)
            if digest is not None:
                self.compiler.verdicts[key] = known
        return known

    def _compile_each(self, params: list[Param], compiler) -> CheckResult:
        seen = set()
        stage = "cubin" if any(word in self._source() for word in NEEDS_ASSEMBLER) else COMPILE_STAGE
        for case in self.puzzle.cases:
            if case.large:  # its blocks are a small case's, or as long as its sizes: slow to compile, no news
                continue
            input_specs, output_specs = self.shapes.typed(case)
            dtypes = [s.dtype for s in (*input_specs, *output_specs)]
            key = (tuple(sorted(case.blocks.items())), tuple(dtypes))
            if key in seen:
                continue
            seen.add(key)
            try:
                values = self.shapes.plan(case).values
                binding = self._bind(params, [s.name for s in self.shapes.all], values)
            except BindingError:
                continue
            signature, constexprs = binding.compile_signature(params, dtypes)
            message = wire.Compile(file=str(self.kernel_file), kernel=self.puzzle.kernel, signature=signature,
                                   constexprs=constexprs, values=values, stage=stage)
            try:
                reply = self._compiled(message, compiler)
            except Unanswered as unanswered:
                unfinished = failures.CheckUnfinished(unanswered.cause)
                return CheckResult(False, failures.word(unfinished), unfinished.kind)
            if isinstance(reply, wire.Failure):
                blocks = ", ".join(f"{k}={v}" for k, v in case.blocks.items()
                                   if k not in binding.provided) or "defaults"
                blocks += f"; {reply.config}" if reply.config else ""
                failed = failures.CompileFailed(reply.error, reply.line, reply.source,
                                                case=describe_case(case, self.puzzle),
                                                inputs={s.name: s.dtype for s in input_specs},
                                                outputs={s.name: s.dtype for s in output_specs})
                refused = failures.CompileCheck(blocks, failed)
                return CheckResult(False, failures.word(refused), refused.kind)
        return CheckResult(True, f"compiles for sm_90 ({len(seen)} block configuration(s))")


def _read_across(sampled: wire.SampledRun) -> "failures.ReadAcross | None":
    """A sampled run's first load of an output element the loading program had not stored itself."""
    if not sampled.foreign_reads:
        return None
    read = sampled.foreign_reads[0]
    return failures.ReadAcross(read.tensor, tuple(read.program), read.index, tuple(read.shape), read.written,
                               sampled.ran, sampled.programs, read.line, read.source)
