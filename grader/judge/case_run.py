"""What a kind's case runner is given, what it answers the life cycle (:mod:`grader.judge.grade`),
and what every runner shares: the :class:`PuzzleState` it is handed, the :class:`CaseRunner` base
whose optional steps do nothing until a kind overrides them, a case's :class:`CaseOutcome`, and a
case's result and its words (the worker's failure as the catalogue says it, its case named).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from grader.channel import wire
from grader.channel.binding import bind
from grader.channel.wire import CoreWarmStep
from grader.course.puzzle import Case, Puzzle
from grader.judge import asking, failures, messages
from grader.judge.asking import Unanswered
from grader.judge.failures import FailureKind
from grader.judge.results import CaseResult, PuzzleResult

if TYPE_CHECKING:
    from concurrent.futures import Future

    from grader.channel.worker_pool import CompileChecker, WorkerProcess
    from grader.judge.options import Options
    from grader.judge.plan import SpecShapes

# Where the sm_90 compile checks stop: through LLVM, where Triton rejects what is not Triton and
# lowers every operation for sm_90. ptxas, a third of the time, can only reject PTX that Triton did
# not write itself (inline assembly) or a register cap: a kernel's check compiles those to the end.
COMPILE_STAGE = "llir"


@dataclass(frozen=True)
class PuzzleState:
    """One puzzle's grading, as its runner and the checks beside its cases see it: the puzzle as
    graded (a student's variant chosen, its cases drawn), the learner's file, the options, the
    workers, and the one way to ask them."""

    puzzle: Puzzle
    shapes: SpecShapes
    options: Options
    kernel_file: Path
    puzzle_path: Path
    expected_signature: str
    decorator: str  # what the expected signature is written with, in messages ("@triton.jit")
    worker: WorkerProcess | None
    compiler: CompileChecker | None = None
    bounds: WorkerProcess | None = None  # on a GPU: the interpreter, where each case runs again, its accesses checked
    compile_beside: bool = False  # whether a GPU compile check gates the cases (where a compile checker is given)
    notes: list[str] = field(default_factory=list)  # said beside a pass: a property check's correct alternative

    def ask(self, message: wire.Request, blobs=(), timeout: float | None = None, worker=None):
        """Send ``message`` (to the puzzle's worker unless another is named); its reply and blobs.
        A timeout, a dead worker and a malformed reply raise :class:`Unanswered`."""
        return asking.ask(worker or self.worker, message, blobs, self.options.timeout if timeout is None else timeout,
                          self.options.device)

    def malformed(self, error: Exception) -> None:
        asking.malformed(self.worker, error, self.options.device)

    def bind(self, params, pointer_names, values, info: wire.Loaded | None):
        """The case's values bound to the kernel's parameters, as ``info`` (the load's reply) describes them."""
        return bind(params, pointer_names, values, self.expected_signature,
                    provided=frozenset(info.provided if info else ()), defaults=dict(info.defaults) if info else {})

    def beside(self, work, *args) -> Future:
        """``work(*args)`` on a thread of its own (the compile checker's requests, while this
        thread's worker runs cases); its result, or the exception it raised, comes in the Future."""
        from grader.judge.plan import computed
        return computed(lambda: work(*args), beside=True, name=f"compile check of {self.puzzle.id}")

    def checker_session(self):
        """The compile checker's worker for this puzzle. A file that imports torch (a learner's
        puzzle file does, for its spec) has the checker's zygote import it once, not each worker."""
        from grader.source.source_lines import imports_torch
        if imports_torch(self.source()):
            self.compiler.worker.warm |= {CoreWarmStep.TORCH}
        return self.compiler.session()

    def source(self) -> str:
        try:
            return self.kernel_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""


@dataclass(frozen=True)
class CaseOutcome:
    """One case run by a runner, for the life cycle's loop."""

    result: CaseResult | None = None  # None: the case goes on to the runner's next pass with ``carried``
    abort: str | None = None          # why the remaining cases are not run (a crash, a timeout...)
    carried: object = None            # what the next pass needs of it (an autograd case's recording)
    tell: bool = True                 # whether ``on_case`` sees it as soon as it is known
    # In the interpreter, programs read or wrote each other's elements (a launch went serial for
    # it): a large case run without the bounds hooks runs again with them, whose write log judges it.
    crossed: bool = False


class CaseRunner(ABC):
    """What the life cycle asks a kind's runner, in the order it asks. A kind's runner extends this
    and writes ``sniff`` and ``run``; a step it does not override does nothing, or gives the plain
    answer a kind with nothing to add there gives."""

    def __init__(self, state: PuzzleState) -> None:
        self.state, self.puzzle, self.options = state, state.puzzle, state.options
        self.info: wire.Loaded | None = None  # what the worker said of the learner's object, once loaded

    def unsupported(self) -> str | None:
        """Why this machine cannot grade the puzzle at all: the Triton APIs it requires, if missing."""
        return missing_apis(self.puzzle)

    @abstractmethod
    def sniff(self) -> str | None:
        """Code that tells the interpreter from a GPU, read before anything runs: its words, or None."""

    def load_request(self) -> tuple[wire.Load, tuple, float | None]:
        """The Load request, its blobs and its timeout (None: the grade's): the object says its kind."""
        return wire.Load(file=str(self.state.kernel_file), kernel=self.puzzle.kernel), (), None

    def loaded(self, info: wire.Loaded | None, failure: PuzzleResult | None) -> tuple:
        """The kind's last word on the load: kept, and passed on as it came."""
        self.info = info
        return info, failure

    def cases(self) -> list[Case]:
        """The first pass's cases (the runner's state for them fresh)."""
        return list(self.puzzle.cases)

    @abstractmethod
    def run(self, case: Case, carried: object) -> CaseOutcome:
        """One case (``carried``: what a previous pass carried of it, or None)."""

    def next_pass(self, carried: dict[str, object], aborted: bool) -> list[Case]:
        """The cases of one more pass, [] when done."""
        return []

    def settle(self, results: dict[str, CaseResult]) -> None:
        """After the cases, whatever happened."""

    def pass_note(self) -> str:
        """What a pass was graded at, where the kind says: "all N cases pass (<it>)"."""
        return ""

    def finish(self, result: PuzzleResult) -> PuzzleResult:
        """What the kind adds to any result."""
        return result


def case_result(case: Case, puzzle: Puzzle, passed: bool, kind=None, message="", **extra) -> CaseResult:
    return CaseResult(name=case.name, sizes=puzzle.sizes(case), blocks=dict(case.blocks), seed=case.seed,
                      grid=puzzle.launch_grid(case), passed=passed, kind=kind, message=messages.tidy(message),
                      **extra)


def failed_case(case: Case, puzzle: Puzzle, facts, describe: str = "", **extra) -> CaseResult:
    """A failing case's result: the kind and message of the facts found, after ``describe``."""
    text = failures.word(facts)
    return case_result(case, puzzle, False, facts.kind, f"{describe}: {text}" if describe else text, **extra)


def describe_case(case: Case, puzzle: Puzzle) -> str:
    sizes = ", ".join(f"{k}={v}" for k, v in {**puzzle.sizes(case), **case.blocks}.items())
    return f"case {case.label} ({sizes})"


def unanswered_case(case: Case, puzzle: Puzzle, describe: str, unanswered: Unanswered,
                    interpreted: bool = False) -> CaseOutcome:
    """A case whose request got no reply: failed so, and the remaining cases not run. A large case
    the interpreter (``interpreted``) did not finish in time is not graded here, never failed: a
    correct kernel may be merely slow on a CPU."""
    if interpreted and case.large and unanswered.kind == FailureKind.TIMEOUT:
        slow = failures.SlowHere(unanswered.facts.seconds, puzzle.id)
        return CaseOutcome(case_result(case, puzzle, False, slow.kind, f"{describe}: {failures.word(slow)}",
                                       seconds=unanswered.seconds), f"{case.label} {failures.stops(slow.kind)}")
    return CaseOutcome(case_result(case, puzzle, False, unanswered.kind, f"{describe}: {unanswered.text}",
                                   seconds=unanswered.seconds), f"{case.label} {unanswered.abort}")


def reported_case(state: PuzzleState, case: Case, failure: wire.Failure, describe: str, not_callable=None, dims=None,
                  raiser: str | None = None, tell: bool = True, **extra) -> CaseOutcome:
    """A case the worker reported failing, the one way every kind says it: its result, and the
    remaining cases not run where the catalogue says (a crash, the interpreter's limit), this case
    named. ``raiser``: who raised an exception, where not the kernel (an autograd wrapper's phase)."""
    kind, text, abort = case_failure(state, failure, not_callable, dims)
    if raiser is not None and kind == FailureKind.EXCEPTION:
        text = failures.word(failures.Raised(failure.error, failure.line, failure.source, raiser=raiser))
    return CaseOutcome(case_result(case, state.puzzle, False, kind, f"{describe}: {text}", **extra),
                       f"{case.label} {abort}" if abort else None, tell=tell)


def case_failure(state: PuzzleState, failure: wire.Failure, not_callable: failures.NotCallable | None = None,
                 dims: Callable | None = None) -> tuple[FailureKind, str, str | None]:
    """A case's failure as the worker reported it: (kind, text, why the remaining cases are not
    run or None). ``not_callable``: the kind's words for an object that cannot be called (else the
    kernel's, with the worker's reason); ``dims``: an access's tensor's dims (else the spec's)."""
    kind = failures.reported(failure.kind)
    if kind == FailureKind.OUT_OF_BOUNDS:
        named = (dims or (lambda access: spec_dims(state, access)))(failure.access)
        facts = failures.Worded(kind, messages.out_of_bounds(failure.access, named))
    elif kind == FailureKind.EXCEPTION:
        facts = failures.Raised(failure.error, failure.line, failure.source)
    elif kind == FailureKind.COMPILE:
        facts = failures.CompileFailed(failure.error, failure.line, failure.source, on_gpu=True)
    elif kind == FailureKind.INTERPRETER_LIMIT:  # a kernel's cases run once its GPU compile check passed
        facts = failures.InterpreterLimit(failure.error, failure.line, failure.source, state.puzzle.id,
                                          state.compiler is not None and state.compile_beside)
    elif kind == FailureKind.RACE:  # the batched engine's: programs met at an element, nothing to order them
        c = failure.crossing
        facts = failures.ReadAcross(c.tensor, tuple(c.program), tuple(c.other), c.index, tuple(c.shape), c.loaded,
                                    c.line, c.source)
    elif kind == FailureKind.CRASH:
        state.worker.kill()
        facts = failures.Crash(None, failure.error, state.options.device)
    elif kind == FailureKind.SIGNATURE:
        facts = not_callable or failures.NotCallable(state.puzzle.kernel, failure.reason)
    else:
        raise RuntimeError(f"worker error: {failure.error}")
    return kind, failures.word(facts), failures.stops(kind)


def spec_dims(state: PuzzleState, access: wire.OutOfBoundsAccess) -> tuple[str, ...]:
    """The dims the spec gives the tensor an access was out of bounds of (none where it names no tensor of it)."""
    specs = {s.name: state.shapes.buffer_dims(s) for s in state.shapes.all}
    spec = specs.get(access.tensor)
    return spec.dims if spec else ()


def hooks_if_failed(state: PuzzleState, case: Case, run: Callable[[bool], CaseOutcome]) -> CaseOutcome:
    """``run(hooks)``'s outcome. A large case in the interpreter runs without the bounds hooks
    first, and with them only when it fails (a timeout is not run again): a wild access then fails
    as out_of_bounds, where it names the access; and when it passed but its programs read or wrote
    each other's elements, so that the write log finds two programs storing one element without an
    atomic. One the interpreter could not finish or run is not run again."""
    hooks = state.options.check_bounds
    if not (case.large and hooks and state.options.device == "cpu"):
        return run(hooks)
    fast = run(False)
    if (fast.result.passed and not fast.crossed) or \
            fast.result.kind in (FailureKind.TIMEOUT, FailureKind.INTERPRETER_LIMIT, FailureKind.RACE):
        return fast  # (a race the batch found needs no rerun: the serial interpreter's would take long)
    checked = run(True)
    return fast if checked.result.passed else checked


def missing_apis(puzzle: Puzzle) -> str | None:
    """Why this puzzle cannot run on the installed Triton, if it cannot."""
    from grader.course import apis
    missing = apis.missing(puzzle.requires)
    return apis.unsupported_message(missing[0], puzzle.instead) if missing else None

