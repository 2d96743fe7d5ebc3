"""The result model: plain frozen dataclasses that every reporter renders.

A learner's failure is a result (``status="fail"``, a ``kind`` and a message); a bug in the
grader itself is ``status="error"``. Nothing here knows about text, JSON or HTML.
"""
from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Mapping

# Why a case or check failed. Reporters and tests key on these.
FAILURE_KINDS = (
    "mismatch",        # values differ from the spec
    "unwritten",       # output elements still hold the grader's NaN fill
    "nonfinite",       # NaN/Inf where the spec is finite
    "out_of_bounds",   # a load or store outside its tensor
    "input_modified",  # the kernel wrote into an input
    "exception",       # a Python error inside the kernel
    "crash",           # the process running the kernel died
    "timeout",         # the kernel ran past the time limit
    "signature",       # the kernel cannot be called as the puzzle calls it
    "compile",         # it runs in the interpreter but would not compile for a GPU
    "not_found",       # no kernel of that name in the file
    "skipped",         # not run, because an earlier case crashed or timed out
    "shape",           # an autograd wrapper returned the wrong shape, dtype or number of values
    "torch_compute",   # an autograd wrapper computed with PyTorch instead of its kernels
    "saved",           # an autograd wrapper saved the wrong tensors for backward
    "unsupported",     # the installed triton lacks an API the puzzle needs
    "race",            # programs store to one element, or depend on each other's order
    "sniffing",        # the code tells the interpreter from a GPU
    "syntax",          # the file does not parse, so nothing in it can be graded
)

STATUSES = ("pass", "fail", "not_attempted", "unsupported", "error")


class ExitCode(enum.IntEnum):
    """How ``python -m grader`` ends, as pytest's ExitCode: a learner's failure, a usage
    problem and a grader bug each have their own."""

    OK = 0            # everything graded passed (or cannot run on this Triton)
    FAILED = 1        # a puzzle failed or was not attempted
    USAGE_ERROR = 2   # the command line, the course folder or a file named on it is wrong
    INTERNAL_ERROR = 3  # the grader itself broke: please report it


@dataclass(frozen=True)
class CaseResult:
    name: str
    sizes: Mapping[str, int]
    blocks: Mapping[str, int]
    seed: int
    grid: tuple[int, ...]
    passed: bool
    kind: str | None = None
    message: str = ""
    max_abs_err: float | None = None
    seconds: float = 0.0
    printed: str = ""  # what the kernel printed while it ran

    @property
    def label(self) -> str:
        return f"{self.name}[seed={self.seed}]"


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    message: str = ""
    kind: str | None = None


@dataclass(frozen=True)
class PuzzleResult:
    puzzle: str
    title: str
    status: str
    source: str
    device: str
    cases: tuple[CaseResult, ...] = ()
    checks: Mapping[str, CheckResult] = field(default_factory=dict)
    message: str = ""  # the one-line reason shown in plain output
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def first_failure(self) -> CaseResult | CheckResult | None:
        for case in self.cases:
            if not case.passed:
                return case
        for check in self.checks.values():
            if not check.passed:
                return check
        return None


@dataclass(frozen=True)
class Summary:
    """One count per status: ``passed + failed + not_attempted + unsupported + errors == total``."""
    total: int
    passed: int
    failed: int          # status "fail" only: tried, and wrong
    not_attempted: int   # still the stub: not a failure
    errors: int          # the grader broke: not the learner's failure
    unsupported: int = 0  # needs an API the installed Triton lacks: neither passed nor failed


@dataclass(frozen=True)
class Report:
    results: tuple[PuzzleResult, ...]
    seconds: float = 0.0

    @property
    def summary(self) -> Summary:
        statuses = [r.status for r in self.results]
        return Summary(
            total=len(statuses),
            passed=statuses.count("pass"),
            failed=statuses.count("fail"),
            not_attempted=statuses.count("not_attempted"),
            errors=statuses.count("error"),
            unsupported=statuses.count("unsupported"),
        )

    @property
    def exit_code(self) -> int:
        """0: everything passed (or cannot run on this Triton); 1: something failed or was not
        attempted; 3: the grader itself broke (as pytest's INTERNAL_ERROR)."""
        if any(r.status == "error" for r in self.results):
            return ExitCode.INTERNAL_ERROR
        passed = self.results and all(r.status in ("pass", "unsupported") for r in self.results)
        return ExitCode.OK if passed else ExitCode.FAILED


@dataclass(frozen=True)
class StudentResult:
    """One student of a class: a result per puzzle, and what could not be read."""

    student: str
    results: tuple[PuzzleResult, ...]
    problems: tuple[str, ...]
    seconds: float

    @property
    def total(self) -> int:
        return sum(r.passed for r in self.results)


def to_dict(obj) -> dict:
    """A JSON-ready dict of any result object (tuples become lists)."""
    return asdict(obj)
