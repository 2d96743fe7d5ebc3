"""The kernel raised, crashed, ran too long, or cannot run here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from grader.judge.failures.catalogue import FailureKind, register
from grader.judge.failures.words import at_line, ended, last_line, usual_fix


@dataclass(frozen=True)
class Raised:
    """A Python error in the kernel, or (``raiser``) in an autograd wrapper's own code."""

    kind: ClassVar = FailureKind.EXCEPTION
    error: str
    line: int | None = None
    source: str = ""
    raiser: str = "the kernel"


def _raised(f: Raised) -> str:
    text = f"{f.raiser} raised {f.error}{at_line(f.line, f.source)}."
    fix = usual_fix(f.error)
    return text + (f" Fix: {fix}" if fix else "")


@dataclass(frozen=True)
class LaunchRefused:
    """A recorded launch that a GPU refuses (a grid axis or num_warps past its limits)."""

    kind: ClassVar = FailureKind.EXCEPTION
    launch: str  # "your forward's launch of `rms_norm_fwd`"
    why: str     # grader.course.limits.refusal's text, the fix included
    line: int | None = None
    source: str = ""


def _launch_refused(f: LaunchRefused) -> str:
    return f"{f.launch}{at_line(f.line, f.source)} is refused on a GPU, and raised here as it would be there: {f.why}"


@dataclass(frozen=True)
class ImportFailed:
    """Importing the learner's file raised."""

    kind: ClassVar = FailureKind.EXCEPTION
    file: str
    error: str
    line: int | None = None
    source: str = ""


def _import_failed(f: ImportFailed) -> str:
    return (f"importing {f.file} failed: {f.error}"
            + (f" (line {f.line}: `{f.source}`)" if f.line else ""))


@dataclass(frozen=True)
class ReplayDisagrees:
    """Replaying an autograd wrapper on the real inputs did not do what recording it did."""

    kind: ClassVar = FailureKind.EXCEPTION
    detail: str


def _replay_disagrees(f: ReplayDisagrees) -> str:
    return (f"replaying your wrapper on the real inputs gave another result than recording it: {f.detail}. "
            f"A wrapper must do the same whatever the values: allocate, reshape, launch and save.")


@dataclass(frozen=True)
class Crash:
    """The process running the kernel died (``returncode``), reported a crash it cannot survive
    (``returncode`` None: a CUDA error), or broke the grading channel (``corrupted``)."""

    kind: ClassVar = FailureKind.CRASH
    returncode: int | None
    stderr_tail: str
    device: str
    corrupted: bool = False


def _crash(f: Crash) -> str:
    detail = last_line(f.stderr_tail, "no message")
    if f.corrupted:
        return (f"the process running the kernel wrote garbage into the grader's channel ({detail}). "
                f"Kernels must not write to file descriptors.")
    if f.returncode is None:
        text = f"the kernel crashed its process ({detail})."
    else:
        text = f"the process running the kernel died ({ended(f.returncode)}: {detail})."
        if f.returncode == -24:  # SIGXCPU
            text += " It used up its CPU time: the grader gives every worker a CPU-time budget."
    if f.device == "cuda":
        text += (" On a GPU this is usually an illegal memory access. Run with `--device cpu` to localise it: "
                 "the interpreter reports the tensor, program and line of the bad access.")
    else:
        text += " This is usually an unmasked store far outside a tensor."
    return text


@dataclass(frozen=True)
class Timeout:
    """Past the limit of ``seconds`` of CPU time, or (``wall``) past the wall-clock backstop for a
    worker that used little CPU: the limit is CPU time, so that a machine's load changes no verdict."""

    kind: ClassVar = FailureKind.TIMEOUT
    seconds: float
    importing: bool = False  # while the worker imported the learner's file, before any case
    wall: float | None = None


def _timeout(f: Timeout) -> str:
    within = (f"{f.seconds:g} s of CPU time" if f.wall is None
              else f"{f.wall:.0f} s of wall-clock time (the limit is {f.seconds:g} s of CPU time, "
              "waited for longer on a busy machine)")
    return (f"the kernel did not finish within {within}. Look for a loop whose bound never "
            f"becomes true (a `while`, or a `range` over a huge or negative count); raise the limit with "
            f"--timeout if the kernel is merely slow." + (" (while importing the file)" if f.importing else ""))


@dataclass(frozen=True)
class SlowHere:
    """A large case the interpreter did not finish in its time: a correct kernel may be merely slow
    on a CPU (small tiles make many programs and long loops), so it is neither a pass nor a fail."""

    kind: ClassVar = FailureKind.INTERPRETER_LIMIT
    seconds: float
    puzzle: str


def _slow_here(f: SlowHere) -> str:
    return (f"not graded here: the interpreter did not finish this large case within {f.seconds:g} s of CPU "
            f"time, running every program of its launches on the CPU. A correct kernel can be merely slow here "
            f"(small tiles make many programs and long loops), so this is neither a pass nor a fail. Grade it on "
            f"a GPU (python -m grader {f.puzzle} --device cuda), or give the interpreter more time "
            f"(python -m grader {f.puzzle} --timeout {max(120, int(4 * f.seconds))})")


@dataclass(frozen=True)
class InterpreterLimit:
    """A correct-looking kernel the interpreter cannot run: its limit, never the learner's failure.
    ``compiled``: it passed the GPU compile check."""

    kind: ClassVar = FailureKind.INTERPRETER_LIMIT
    error: str
    line: int | None
    source: str
    puzzle: str
    compiled: bool


def _interpreter_limit(f: InterpreterLimit) -> str:
    checked = "it compiles for sm_90" if f.compiled else "the interpreter cannot tell whether it is right"
    return (f"the grader's interpreter cannot run this kernel: {f.error}"
            f"{at_line(f.line, f.source)}. This is a limit of the interpreter, not a "
            f"mistake of yours, and it is neither a pass nor a fail: {checked}; grade it on a GPU: "
            f"python -m grader {f.puzzle} --device cuda")


@dataclass(frozen=True)
class BesideUnchecked:
    """On a GPU the case's values passed, but its run in the interpreter beside it, where each
    load and store is checked, could not run (``why``): the check is missing, and says so."""

    kind: ClassVar = FailureKind.INTERPRETER_LIMIT
    why: str
    line: int | None = None
    source: str = ""


def _beside_unchecked(f: BesideUnchecked) -> str:
    return (f"the values are right on the GPU, but the bounds check that runs each case again in Triton's "
            f"interpreter could not run: {f.why}{at_line(f.line, f.source)}. A load out of bounds whose value is "
            f"never used shows on no GPU, so without that check this case is neither a pass nor a fail")


@dataclass(frozen=True)
class Skipped:
    kind: ClassVar = FailureKind.SKIPPED
    abort: str  # why: "<case> crashed", "<case> timed out", ...


def _skipped(f: Skipped) -> str:
    return f"not run: {f.abort}"


register(FailureKind.EXCEPTION, {Raised: _raised, LaunchRefused: _launch_refused, ImportFailed: _import_failed,
                    ReplayDisagrees: _replay_disagrees})
register(FailureKind.CRASH, {Crash: _crash})
register(FailureKind.TIMEOUT, {Timeout: _timeout})
register(FailureKind.SKIPPED, {Skipped: _skipped})
register(FailureKind.INTERPRETER_LIMIT, {InterpreterLimit: _interpreter_limit, BesideUnchecked: _beside_unchecked,
                                         SlowHere: _slow_here})
