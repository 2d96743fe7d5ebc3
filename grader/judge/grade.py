"""Grading one puzzle: the life cycle every kind goes through, whatever its runner does.

unsupported → sniff → load → stub → cases (one loop, which stops the rest after a crash or a
timeout) → checks → verdict. The puzzle's kind (given: this module cannot ask the registry, which
names the runners) supplies each step that differs: its case runner
(:class:`grader.judge.case_run.CaseRunner`) and the checks it lists beside the cases. Nothing here
names a kind (tests/test_kinds.py).

The puzzle's definition (spec, cases, tolerances) always comes from the course's own puzzle
file; only the learner's object comes from the learner's file, and only the worker imports it.
"""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from grader.channel import wire
from grader.channel.binding import Param
from grader.channel.worker_pool import CompileChecker, WorkerProcess
from grader.course.case import draw
from grader.course.loader import Course, stub_signature
from grader.course.variant import shown
from grader.judge import failures, messages
from grader.judge.asking import Unanswered
from grader.judge.case_run import PuzzleState, failed_case
from grader.judge.failures import FailureKind
from grader.judge.options import Options
from grader.judge.plan import SpecShapes, students_secret
from grader.judge.results import CaseResult, CheckName, CheckResult, PuzzleResult, Status, most_telling
from grader.source import stubs, variant_code
from grader.source.source_lines import kernel_code


class PuzzleGrader:
    """One puzzle's grading: the life cycle, over the state its kind's runner is handed."""

    def __init__(self, course: Course, puzzle_id: str, kernel_file: Path, worker: WorkerProcess,
                 options: Options, compiler: "CompileChecker | None" = None, bounds: WorkerProcess | None = None,
                 on_case=None, *, kind) -> None:
        self.course = course
        self.on_case = on_case  # sees each case's result as soon as it is known (the command line's first failure)
        puzzle_path = course.puzzle_file(puzzle_id)
        # A batch's student gets their own values of the puzzle's free constants (Variant).
        puzzle = course.puzzle_for(puzzle_id, options.secret, options.student)
        # With a batch's secret, each case's varied sizes and its inputs are drawn from it and the student.
        options = replace(options, secret=students_secret(options.secret, options.seeded_for))
        puzzle = replace(puzzle, cases=tuple(draw(c, puzzle.id, options.secret) for c in puzzle.cases))
        self.kind = kind  # a grader.judge.kinds.kind.PuzzleKind
        self.checks = kind.checks()
        self.state = PuzzleState(
            puzzle=puzzle, shapes=SpecShapes(puzzle), options=options, kernel_file=Path(kernel_file).resolve(),
            puzzle_path=puzzle_path, expected_signature=stub_signature(str(puzzle_path), puzzle.kernel),
            decorator=kind.decorator, worker=worker, compiler=compiler, bounds=bounds,
            compile_beside=any(check.gate for check in self.checks))
        self.puzzle, self.options, self.kernel_file = puzzle, options, self.state.kernel_file
        self.runner = kind.runner()(self.state)

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

    # ---- the life cycle ---------------------------------------------------------------------
    def grade(self) -> PuzzleResult:
        """The puzzle's result. Its learner code runs in workers of its own: a fresh one at the
        start, ended at the end, so that nothing of another puzzle's reaches this one's."""
        started = time.perf_counter()
        if self.kind.warm:  # imported once in the zygote, before its fork: every worker starts with it
            self.state.worker.warm |= self.kind.warm
        workers = [w for w in (self.state.worker, self.state.bounds) if w is not None]
        for worker in workers:
            worker.recycle()
        try:
            result = self._grade(started)
        except Exception as exc:  # a bug in the grader or the course, never the learner's fault
            import traceback
            result = self.result(Status.ERROR, f"grader error: {type(exc).__name__}: {exc}\n"
                                 + traceback.format_exc(limit=6), started=started)
        finally:
            for worker in workers:
                worker.recycle()
        return self.runner.finish(result)

    def _grade(self, started: float) -> PuzzleResult:
        for refused in (self.runner.unsupported, self._machine_refusal):
            said = refused()
            if said is not None:
                return self.result(Status.UNSUPPORTED, said, started=started)
        sniffed = self.runner.sniff()
        if sniffed is not None:
            return self.result(Status.FAIL, sniffed,
                               checks={CheckName.SNIFFING: CheckResult(False, sniffed, FailureKind.SNIFFING)},
                               started=started)
        try:
            info, failure = self._load()
        except Unanswered as unanswered:
            facts = replace(unanswered.facts, importing=True) if unanswered.kind == FailureKind.TIMEOUT \
                else unanswered.facts
            message = failures.word(facts)
            return self.result(Status.FAIL, message,
                               checks={CheckName.LOAD: CheckResult(False, message, unanswered.kind)}, started=started)
        if failure is not None:
            return failure
        if self.still_the_stub():
            return self.result(Status.NOT_ATTEMPTED, f"not attempted: `{self.puzzle.kernel}` is still the stub as "
                               f"shipped (comments, docstrings and `pass` aside)", started=started)
        params = [Param(p.name, p.constexpr) for p in info.params]
        # Each check runs beside the cases, begun before the first (a compile of what would not run on a
        # GPU: the interpreter would run it as plain Python) and awaited after the last: never left running.
        running = [(check, check.start(self.runner, params)) for check in self.checks]
        try:
            cases = self._cases()
        finally:
            done = [(check, handle.result()) for check, handle in running if handle is not None]
        checks = {c.name: r for c, r in done if r is not None and c.gate}
        for gate in checks.values():
            if not gate.passed:  # the cases that ran are shown beside it; none counts
                return self.result(Status.FAIL, gate.message, cases, checks, started)
        result = self._verdict(cases, checks, started)
        if result.status == Status.PASS and (graded_at := self.runner.pass_note()):
            result = replace(result, message=f"{result.message} ({graded_at})", graded_at=graded_at)
        for check, after in ((c, r) for c, r in done if r is not None and not c.gate):
            if result.status not in (Status.PASS, Status.FAIL):
                break
            failing = not after.passed and result.status == Status.PASS
            result = replace(result, checks={**result.checks, check.name: after},
                             **({"status": Status.FAIL, "message": after.message} if failing else {}))
        return result

    def _cases(self) -> list[CaseResult]:
        """Every case the runner brings, pass by pass, in order; after a crash or a timeout the rest
        are skipped, and in the interpreter so are the large cases once a case has failed (every
        program of their launches would run, for a kernel that is already wrong). A case a pass
        carries goes on to the next (recorded in one, replayed in the next)."""
        results: dict[str, CaseResult] = {}
        order: dict[str, None] = {}  # labels, as first met
        carried: dict[str, object] = {}
        abort: str | None = None
        todo = self.runner.cases()
        try:
            while todo:
                passing, carried = carried, {}
                for case in todo:
                    order.setdefault(case.label)
                    if abort is None and case.large and self.options.device == "cpu":
                        failed = next((r.label for r in results.values() if not r.passed), None)
                        if failed is not None:
                            results[case.label] = failed_case(case, self.puzzle, failures.Skipped(
                                f"case {failed} already failed, and a large case runs every program of its "
                                f"launches in the interpreter: fix that one first"))
                            continue
                    if abort is not None:
                        results[case.label] = failed_case(case, self.puzzle, failures.Skipped(abort))
                        continue
                    outcome = self.runner.run(case, passing.get(case.label))
                    abort = outcome.abort
                    if outcome.result is None:
                        carried[case.label] = outcome.carried
                        continue
                    results[case.label] = outcome.result
                    if outcome.tell and self.on_case is not None:
                        self.on_case(self.puzzle.id, outcome.result)
                todo = self.runner.next_pass(carried, abort is not None)
        finally:
            self.runner.settle(results)
        return [results[label] for label in order]

    def _verdict(self, cases: list[CaseResult], checks: dict, started: float) -> PuzzleResult:
        failed = [c for c in cases if not c.passed] + [c for c in checks.values() if not c.passed]
        if not failed:
            notes = "".join(f"\n{said}" for said in self.state.notes)
            return self.result(Status.PASS, f"all {len(cases)} cases pass{notes}", cases, checks, started)
        undecided = failed[0].kind == FailureKind.INTERPRETER_LIMIT  # the interpreter's limit: grade it on a GPU
        shown = failed[0] if undecided else most_telling(failed)
        notes = self._mistake_notes()
        index = next((i for i, c in enumerate(cases) if c is shown), None)
        if notes and index is not None:  # a known wrong turn: say so with the case shown
            cases[index] = shown = replace(shown, message=shown.message + notes)
        return self.result(Status.INTERPRETER_LIMIT if undecided else Status.FAIL, shown.message, cases, checks,
                           started)

    def _machine_refusal(self) -> str | None:
        """Where the bounds check beside a GPU cannot run on this machine: the refusal, with its fix."""
        if self.state.bounds is None:
            return None
        from grader.judge import machine
        fault = machine.interpreter_fault()
        return None if fault is None else machine.refusal(fault)

    def still_the_stub(self) -> bool:
        """Whether the learner's kernel is the puzzle's stub as shipped, compared as code
        (:mod:`grader.source.stubs`): any change to what it does makes it attempted."""
        return stubs.is_stub(self.course.root, self.puzzle, self.state.source())

    def _load(self):
        """Ask the worker about the learner's object. Returns (wire.Loaded, None) or (None, failure
        result), as the kind's runner has the last word on them. A timeout or a dead worker raises
        Unanswered."""
        reply, _ = self.state.ask(*self.runner.load_request())
        return self.runner.loaded(*self._loaded(reply))

    def _loaded(self, reply):
        if isinstance(reply, wire.Loaded):
            return reply, None
        kind = failures.reported(reply.kind)
        name, file, decorator, signature = (self.puzzle.kernel, self.kernel_file.name, self.kind.decorator,
                                            self.state.expected_signature)
        if kind == FailureKind.NOT_FOUND:
            facts = failures.NoKernel(name, file, tuple(reply.defined), signature, decorator)
            dropped = self._why_dropped(name)
            if dropped is not None:
                facts = failures.Dropped(name, file, dropped.line, dropped.text, dropped.reason,
                                         signature, decorator)
        elif kind == FailureKind.SIGNATURE:
            facts = failures.NotCallable(name, reply.reason)
        elif kind == FailureKind.EXCEPTION:
            facts = failures.ImportFailed(file, reply.error, reply.line, reply.source)
        else:
            return None, self.result(Status.ERROR, f"worker error while loading: {reply.error}")
        message = failures.word(facts)
        return None, self.result(Status.FAIL, message, checks={CheckName.LOAD: CheckResult(False, message, kind)})

    def _why_dropped(self, name: str):
        from grader.source.definitions import why_dropped
        try:
            return why_dropped(self.kernel_file.read_text(encoding="utf-8"), name)
        except (OSError, UnicodeDecodeError):
            return None

    def traced(self, case):
        """One case run recording every access (interpreter only), for the memory-access pictures:
        (its result, the trace or None if the kernel never ran, a note). Only a kind whose runner
        traces (``PuzzleKind.pictures``) is asked."""
        try:
            info, failure = self._load()
        except Unanswered as unanswered:
            return None, None, unanswered.text
        if failure is not None:
            return None, None, failure.message
        if self.still_the_stub():
            return None, None, "not attempted"
        return self.runner.traced(case, [Param(p.name, p.constexpr) for p in info.params])

    # ---- words beside a failure ---------------------------------------------------------------
    def _mistake_notes(self) -> str:
        source = self.state.source()
        if not source:
            return ""
        # The graded kernel and what it calls, without the statement's words or comments: another
        # puzzle's kernel in the same file is not this one's mistake.
        code = kernel_code(source, self.puzzle.kernel)
        return ("".join(f"\nNote: {m.note}" for m in self.puzzle.mistakes if m.seen_in(code))
                + self._variant_notes(source))

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
