"""The result model: plain frozen dataclasses that every reporter renders.

A learner's failure is a result (``status="fail"``, a ``kind`` and a message); a bug in the
grader itself is ``status="error"``. Nothing here knows about text, JSON or HTML.
"""
from __future__ import annotations

import enum
import re
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

# A failure's kind, and the words telling_rank looks for, from the failures' face (FailureKind's one
# import path: nothing imports it from here).
from grader.judge.failures import LOOKS_LIKE, READ_EARLY, FailureKind, points
from grader.judge.status import Status  # how a puzzle ended, and what it means
from grader.source.attempts import Attempts  # noqa: F401  (a student's attempts, from their progress file)


def _kind(value) -> FailureKind | None:
    """``value`` as a FailureKind (None stays None); an unknown kind is a grader bug."""
    if value is None:
        return None
    try:
        return FailureKind(value)
    except ValueError:
        raise ValueError(f"unknown failure kind {value!r}") from None


class ExitCode(enum.IntEnum):
    """How ``python -m grader`` ends, as pytest's ExitCode: a learner's failure, a usage
    problem and a grader bug each have their own."""

    OK = 0            # everything graded passed (or cannot run on this Triton, or only on a GPU)
    FAILED = 1        # a puzzle failed or was not attempted
    USAGE_ERROR = 2   # the command line, the course folder or a file named on it is wrong
    INTERNAL_ERROR = 3  # the grader itself broke: please report it
    INTERRUPTED = 130  # stopped by Ctrl-C, as a shell reports it (a batch resumes with --resume)


@dataclass(frozen=True)
class CaseResult:
    name: str
    sizes: Mapping[str, int]
    blocks: Mapping[str, int]
    seed: int
    grid: tuple[int, ...]
    passed: bool
    kind: FailureKind | None = None
    message: str = ""
    max_abs_err: float | None = None
    seconds: float = 0.0
    printed: str = ""  # what the kernel printed while it ran

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _kind(self.kind))

    @property
    def label(self) -> str:
        return f"{self.name}[seed={self.seed}]"


class CheckName(enum.StrEnum):
    """A check's entry in a result's ``checks`` (its key in JSON and on the warm server's wire)."""

    LOAD = "load"                # the file loads: it parses, imports, and has the kernel
    SNIFFING = "sniffing"        # no code that tells the interpreter from a GPU
    GPU_COMPILE = "gpu_compile"  # it compiles for a GPU (sm_90), beside the interpreter's cases


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    message: str = ""
    kind: FailureKind | None = None
    ttir: str = ""  # the sm_90 compile's: what the compiler made of the kernel, for the similarity pass

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _kind(self.kind))


@dataclass(frozen=True)
class PuzzleResult:
    puzzle: str
    title: str
    status: Status
    source: str
    device: str
    cases: tuple[CaseResult, ...] = ()
    checks: Mapping[str, CheckResult] = field(default_factory=dict)
    message: str = ""  # the one-line reason shown in plain output
    seconds: float = 0.0
    # The student's values of the puzzle's free constants it was graded with, as the statement
    # words them, by name ({"EPS": "0.001"}); empty where no student's values were chosen.
    variant: Mapping[str, str] = field(default_factory=dict)
    generated: str = ""  # what the kernel became, where a kind generates code (a Helion kernel's Triton)
    # What a pass was graded at, where its kind says (a Helion kernel's fixed tile size): data for the
    # renderers, said in the message too, after "all N cases pass" in parentheses.
    graded_at: str = ""

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "status", Status(self.status))
        except ValueError:
            raise ValueError(f"unknown status {self.status!r}") from None

    @property
    def passed(self) -> bool:
        return self.status == Status.PASS

    @property
    def telling_failure(self) -> CaseResult | CheckResult | None:
        """The failing case or check the headline message is, and every report shows first
        (:func:`most_telling`); None when nothing failed."""
        failed_checks = [c for c in self.checks.values() if not c.passed]
        if failed_checks:  # a kernel that does not load or compile: the cases beside it do not count
            return failed_checks[0]
        failing = [c for c in self.cases if not c.passed]
        if self.status == Status.INTERPRETER_LIMIT:  # what the interpreter could not run decides it
            return next((c for c in failing if c.kind == FailureKind.INTERPRETER_LIMIT), most_telling(failing))
        return most_telling(failing)

    @property
    def first_failure(self) -> CaseResult | CheckResult | None:
        """What decided a failure: a failed check (the kernel did not load or compile for a GPU:
        the interpreter's cases beside it do not count), else the first failing case that ran (a
        case skipped after another failed did not decide it), else the first skipped."""
        for check in self.checks.values():
            if not check.passed:
                return check
        failing = [case for case in self.cases if not case.passed]
        return next((case for case in failing if case.kind != FailureKind.SKIPPED), failing[0] if failing else None)


# A wrong element the kernel left at 0: a loop that never ran, a chunk never added.
_YOURS_ZERO = re.compile(r"\byours -?0(?![\d.e])")


def telling_rank(failure: "CaseResult | CheckResult") -> int:
    """How much a failing case or check explains: 0 tells the most (see :func:`most_telling`)."""
    if failure.kind == FailureKind.SKIPPED:
        return 4
    if points(failure.kind) or LOOKS_LIKE in failure.message or READ_EARLY in failure.message:
        return 0
    if failure.kind == FailureKind.UNWRITTEN:
        return 1
    if failure.kind in (FailureKind.MISMATCH, FailureKind.NONFINITE) and _YOURS_ZERO.search(failure.message):
        return 2
    return 3


def most_telling(failures: Sequence["CaseResult | CheckResult"]) -> "CaseResult | CheckResult | None":
    """The failure to show first: the one that explains the most, so that a learner reads the
    cause and not only its symptom. The one place that decides it; the headline message
    (``PuzzleResult.message``) and every report's default view follow it. From the most telling:

    0. one that names its mistake or points at it: a look-alike's "It looks like", an output read
       before it was stored, an access out of bounds, a race, a write into an input, an
       exception or a compile error at its line, a signature, shape or autograd finding;
    1. output elements never written (the message lists them: the grid or a mask misses them);
    2. wrong values among which the kernel left an element 0 ("yours 0"): a loop that never
       ran, a chunk never added;
    3. any other wrong values, NaN, timeout or crash;
    4. a case not run (skipped).

    Among equals, the first in the grader's order: the course lists its cases from the classic
    one up, so the earlier is the simpler. None when nothing failed."""
    return min(failures, key=telling_rank, default=None)  # min keeps the first of equals


@dataclass(frozen=True)
class Summary:
    """One count per status: ``passed + failed + not_attempted + unsupported + interpreter_limit + errors
    == total``."""
    total: int
    passed: int
    failed: int          # status "fail" only: tried, and wrong
    not_attempted: int   # still the stub: not a failure
    errors: int          # the grader broke: not the learner's failure
    unsupported: int = 0  # needs an API the installed Triton lacks: neither passed nor failed
    interpreter_limit: int = 0  # the interpreter cannot run it: grade it on a GPU, neither passed nor failed


@dataclass(frozen=True)
class Report:
    results: tuple[PuzzleResult, ...]
    seconds: float = 0.0

    @property
    def summary(self) -> Summary:
        statuses = [r.status for r in self.results]
        return Summary(
            total=len(statuses),
            passed=statuses.count(Status.PASS),
            failed=statuses.count(Status.FAIL),
            not_attempted=statuses.count(Status.NOT_ATTEMPTED),
            errors=statuses.count(Status.ERROR),
            unsupported=statuses.count(Status.UNSUPPORTED),
            interpreter_limit=statuses.count(Status.INTERPRETER_LIMIT),
        )

    @property
    def exit_code(self) -> int:
        """0: everything passed (or cannot run on this Triton, or runs only on a GPU: the
        interpreter's limit is never the learner's failure); 1: something failed or was not
        attempted; 3: the grader itself broke (as pytest's INTERNAL_ERROR)."""
        if any(r.status == Status.ERROR for r in self.results):
            return ExitCode.INTERNAL_ERROR
        passed = self.results and all(r.passed or not r.status.counts for r in self.results)
        return ExitCode.OK if passed else ExitCode.FAILED


@dataclass(frozen=True)
class StudentResult:
    """One student of a class: a result per puzzle, what could not be read, and the attempts
    their progress file records (none when the submission carries no progress file)."""

    student: str
    results: tuple[PuzzleResult, ...]
    problems: tuple[str, ...]
    seconds: float
    attempts: tuple[Attempts, ...] = ()
    # The id as handed in (`Zoë Ñúñez`); ``student`` is its sanitised key, which names their
    # folders and the page's anchors. "" where nobody recorded it (a result typed by hand).
    submitted_id: str = ""

    @property
    def total(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def id_as_submitted(self) -> str:
        return self.submitted_id or self.student

    @property
    def refused(self) -> bool:
        """A row that is no graded student: an entry of the submissions folder intake refused, its
        one problem the reason (``REFUSED``). Counted in no total; graded afresh on --resume."""
        return not self.results and len(self.problems) == 1 and self.problems[0].startswith(REFUSED + ":")

    @property
    def grader_broke(self) -> bool:
        """Whether the grader itself broke on this student: a puzzle ended in ``error``, or the
        whole student did (the problem the class's engines record, prefixed ``GRADER_ERROR``)."""
        return any(r.status == Status.ERROR for r in self.results) or \
            any(p.startswith(GRADER_ERROR) for p in self.problems)


# How a student's problems name a grader error (grader.judge.classroom and cluster write it).
GRADER_ERROR = "grader error:"
# The start of the one problem line of an entry of the submissions folder not graded (batch_resume.refused).
REFUSED = "refused"


def to_dict(obj) -> dict:
    """A JSON-ready dict of any result object (tuples become lists)."""
    return asdict(obj)
