"""What a kind's case runner gives the life cycle (:mod:`grader.judge.grade`) and what every
runner shares: a case's :class:`CaseOutcome`, a case's result and its words, the worker's
failure as the catalogue says it.

A runner is the class a kind names (``PuzzleKind.runner``), made with the grader it runs for;
it reads the grading's state from it (``puzzle``, ``shapes``, ``options``, ``kernel_file``,
``worker``, ``compiler``, ``bounds``, ``info``, ``notes``) and asks through it
(``ask``, ``malformed``, ``bind``, ``beside``, ``checker_session``, ``source``). What it must
answer is :class:`CaseRunner`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from grader.channel import wire
from grader.course.puzzle import Case, Puzzle
from grader.judge import failures, messages
from grader.judge.asking import Unanswered
from grader.judge.results import CaseResult, FailureKind, PuzzleResult

# Where the sm_90 compile checks stop: through LLVM, where Triton rejects what is not Triton and
# lowers every operation for sm_90. ptxas, a third of the time, can only reject PTX that Triton did
# not write itself (inline assembly) or a register cap: a kernel's check compiles those to the end.
COMPILE_STAGE = "llir"


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


class CaseRunner(Protocol):
    """What the life cycle asks a kind's runner, in the order it asks."""

    def unsupported(self) -> str | None: ...  # why this machine cannot grade the puzzle at all
    def sniff(self) -> str | None: ...  # code that tells the interpreter from a GPU, read before anything runs
    def load_request(self) -> tuple[wire.Load, tuple, float | None]: ...  # None: the grade's timeout
    def loaded(self, info: wire.Loaded | None, failure: PuzzleResult | None) -> tuple: ...  # the kind's last word
    def cases(self) -> list[Case]: ...  # the first pass's cases (its state for them fresh)
    def run(self, case: Case, carried: object) -> CaseOutcome: ...
    def next_pass(self, carried: dict[str, object], aborted: bool) -> list[Case]: ...  # [] when done
    def settle(self, results: dict[str, CaseResult]) -> None: ...  # after the cases, whatever happened
    def pass_note(self) -> str: ...  # said after "all N cases pass"
    def finish(self, result: PuzzleResult) -> PuzzleResult: ...  # what the kind adds to any result


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


def reported_case(grader, case: Case, failure: wire.Failure, describe: str, not_callable=None, dims=None,
                  **extra) -> CaseOutcome:
    """A case the worker reported failing: its result, and the remaining cases not run where the
    catalogue says (a crash, the interpreter's limit)."""
    kind, text, abort = case_failure(grader, failure, not_callable, dims)
    return CaseOutcome(case_result(case, grader.puzzle, False, kind, f"{describe}: {text}", **extra),
                       f"{case.label} {abort}" if abort else None)


def case_failure(grader, failure: wire.Failure, not_callable: failures.NotCallable | None = None,
                 dims: Callable | None = None) -> tuple[FailureKind, str, str | None]:
    """A case's failure as the worker reported it: (kind, text, why the remaining cases are not
    run or None). ``not_callable``: the kind's words for an object that cannot be called (else the
    kernel's, with the worker's reason); ``dims``: an access's tensor's dims (else the spec's)."""
    kind = failures.reported(failure.kind)
    if kind == FailureKind.OUT_OF_BOUNDS:
        named = (dims or (lambda access: spec_dims(grader, access)))(failure.access)
        facts = failures.Worded(kind, messages.out_of_bounds(failure.access, named))
    elif kind == FailureKind.EXCEPTION:
        facts = failures.Raised(failure.error, failure.line, failure.source)
    elif kind == FailureKind.COMPILE:
        facts = failures.CompileFailed(failure.error, failure.line, failure.source, on_gpu=True)
    elif kind == FailureKind.INTERPRETER_LIMIT:  # a kernel's cases run once its GPU compile check passed
        facts = failures.InterpreterLimit(failure.error, failure.line, failure.source, grader.puzzle.id,
                                          grader.compiler is not None and grader.compile_beside)
    elif kind == FailureKind.RACE:  # the batched engine's: programs met at an element, nothing to order them
        c = failure.crossing
        facts = failures.ReadAcross(c.tensor, tuple(c.program), tuple(c.other), c.index, tuple(c.shape), c.loaded,
                                    c.line, c.source)
    elif kind == FailureKind.CRASH:
        grader.worker.kill()
        facts = failures.Crash(None, failure.error, grader.options.device)
    elif kind == FailureKind.SIGNATURE:
        facts = not_callable or failures.NotCallable(grader.puzzle.kernel, failure.reason)
    else:
        raise RuntimeError(f"worker error: {failure.error}")
    return kind, failures.word(facts), failures.stops(kind)


def spec_dims(grader, access: wire.OutOfBoundsAccess) -> tuple[str, ...]:
    """The dims the spec gives the tensor an access was out of bounds of (none where it names no tensor of it)."""
    specs = {s.name: grader.shapes.buffer_dims(s) for s in grader.shapes.all}
    spec = specs.get(access.tensor)
    return spec.dims if spec else ()


def hooks_if_failed(grader, case: Case, run: Callable[[bool], CaseOutcome]) -> CaseOutcome:
    """``run(hooks)``'s outcome. A large case in the interpreter runs without the bounds hooks
    first, and with them only when it fails (a timeout is not run again): a wild access then fails
    as out_of_bounds, where it names the access; and when it passed but its programs read or wrote
    each other's elements, so that the write log finds two programs storing one element without an
    atomic. One the interpreter could not finish or run is not run again."""
    hooks = grader.options.check_bounds
    if not (case.large and hooks and grader.options.device == "cpu"):
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


def load_request(grader) -> tuple[wire.Load, tuple, float | None]:
    """The Load request, its blobs and its timeout (None: the grade's): the object says its kind."""
    return wire.Load(file=str(grader.kernel_file), kernel=grader.puzzle.kernel), (), None
