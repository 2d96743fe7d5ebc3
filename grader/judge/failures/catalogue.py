"""The kinds of failure and the catalogue itself: per :class:`FailureKind`, the label every report
prints and whether its cases stop; each family's module registers the words of its facts."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, Mapping

# Each member is a str equal to its value, and prints and formats as that value: JSON, CSV and
# reports take it as text. Named here so that every vocabulary of the grader takes it from one place.
StrEnum = enum.StrEnum


class FailureKind(StrEnum):
    """Why a case or check failed. Reporters, the wrong-kernel corpus and tests key on these."""

    MISMATCH = "mismatch"              # values differ from the spec
    UNWRITTEN = "unwritten"            # output elements still hold the grader's NaN fill
    NONFINITE = "nonfinite"            # NaN/Inf where the spec is finite
    OUT_OF_BOUNDS = "out_of_bounds"    # a load or store outside its tensor
    INPUT_MODIFIED = "input_modified"  # the kernel wrote into an input
    EXCEPTION = "exception"            # a Python error inside the kernel (or importing the file)
    CRASH = "crash"                    # the process running the kernel died, or broke the channel
    TIMEOUT = "timeout"                # the kernel ran past the time limit
    SIGNATURE = "signature"            # the kernel cannot be called as the puzzle calls it
    COMPILE = "compile"                # it would not compile for a GPU
    NOT_FOUND = "not_found"            # no kernel of that name in the file
    SKIPPED = "skipped"                # not run, because an earlier case crashed or timed out
    SHAPE = "shape"                    # an autograd wrapper returned the wrong shape, dtype or number of values
    TORCH_COMPUTE = "torch_compute"    # an autograd wrapper (a Helion kernel outside its tiles) computed with PyTorch
    SAVED = "saved"                    # an autograd wrapper saved the wrong tensors for backward
    RACE = "race"                      # programs store to one element, or depend on each other's order
    SNIFFING = "sniffing"              # the code tells the interpreter from a GPU
    SYNTAX = "syntax"                  # the file does not parse, so nothing in it can be graded
    INTERPRETER_LIMIT = "interpreter_limit"  # the interpreter cannot run it (not the learner's failure)
    BENCH_REJECTED = "bench_rejected"  # --bench could not trust its timing: the run is refused


@dataclass(frozen=True)
class Entry:
    """One kind of failure: how reports label it, and how its message reads from each kind of
    facts it is found with."""

    label: str  # a report's short name for it (the HTML table's failure column)
    words: dict[type, Callable[[Any], str]]  # facts type -> the message (filled by register)
    stops: str | None = None  # after it the remaining cases are not run: "<case> <stops>" says why
    points: bool = False  # its message points at the line, access or element at fault: shown first

    def message(self, facts) -> str:
        return self.words[type(facts)](facts)


# Per kind, its label, whether its cases stop and whether it points at the fault. The words of
# each kind of facts are registered by the family that finds them (grader.judge.failures.values,
# .memory, ...), so that a new family, or a puzzle kind's own failures, adds its words without
# editing this table.
CATALOGUE: dict[FailureKind, Entry] = {
    FailureKind.MISMATCH: Entry("wrong values", {}),
    FailureKind.UNWRITTEN: Entry("not written", {}),
    FailureKind.NONFINITE: Entry("NaN/Inf", {}),
    FailureKind.OUT_OF_BOUNDS: Entry("out of bounds", {}, points=True),
    FailureKind.INPUT_MODIFIED: Entry("wrote an input", {}, points=True),
    FailureKind.EXCEPTION: Entry("exception", {}, points=True),
    FailureKind.CRASH: Entry("crash", {}, stops="crashed"),
    FailureKind.TIMEOUT: Entry("timeout", {}, stops="timed out"),
    FailureKind.SIGNATURE: Entry("signature", {}, points=True),
    FailureKind.COMPILE: Entry("compile", {}, points=True),
    FailureKind.NOT_FOUND: Entry("not found", {}, points=True),
    FailureKind.SKIPPED: Entry("skipped", {}),
    FailureKind.SHAPE: Entry("shape", {}, points=True),
    FailureKind.TORCH_COMPUTE: Entry("computed with PyTorch", {}, points=True),
    FailureKind.SAVED: Entry("saved", {}, points=True),
    FailureKind.RACE: Entry("race", {}, points=True),
    FailureKind.SNIFFING: Entry("sniffing", {}, points=True),
    FailureKind.SYNTAX: Entry("syntax", {}, points=True),
    FailureKind.INTERPRETER_LIMIT: Entry("interpreter limit", {}, stops="needs a GPU"),
    FailureKind.BENCH_REJECTED: Entry("bench rejected", {}),
}
# A value check's failures that carry the kind of what they found: registered under each of these.
VALUE_KINDS = (FailureKind.MISMATCH, FailureKind.UNWRITTEN, FailureKind.NONFINITE)


def register(kinds, words: Mapping[type, Callable[[Any], str]]) -> None:
    """Word these facts types (facts type -> its message) under ``kinds`` (one or several)."""
    for kind in (kinds,) if isinstance(kinds, FailureKind) else kinds:
        taken = set(words) & set(CATALOGUE[kind].words)
        if taken:
            raise ValueError(f"{kind}: {', '.join(t.__name__ for t in taken)} worded twice")
        CATALOGUE[kind].words.update(words)


UNKINDED = "failed"  # the label of a failure that has no kind


def label(kind: FailureKind | str | None) -> str:
    """What a report prints for a failure of ``kind``."""
    return CATALOGUE[FailureKind(kind)].label if kind else UNKINDED


def word(facts) -> str:
    """The message a learner reads for ``facts``, from its kind's entry."""
    return CATALOGUE[facts.kind].message(facts)


def points(kind: FailureKind | None) -> bool:
    """Whether a failure of ``kind`` names the line, access or element at fault (see
    :func:`grader.judge.results.most_telling`)."""
    return kind is not None and CATALOGUE[kind].points


def stops(kind: FailureKind) -> str | None:
    """Why the cases after one that failed so are not run, or None where they are."""
    return CATALOGUE[kind].stops


def reported(name: str) -> FailureKind | None:
    """The kind a worker's failure of this name (``wire.Failure.kind``) is; None for the
    worker's own breakage ("error"), a grader bug."""
    try:
        return FailureKind(name)
    except ValueError:
        return None


@dataclass(frozen=True)
class Worded:
    """A failure its finder words itself, from what the catalogue does not hold: the learner's
    own line (the bounds fix), a course file's load error, intake's problem lines, a reason the
    worker or the binding gave, the sniffing checks' findings."""

    kind: FailureKind
    text: str


def _said(facts: Worded) -> str:
    return facts.text


register((FailureKind.OUT_OF_BOUNDS, FailureKind.EXCEPTION, FailureKind.SIGNATURE, FailureKind.NOT_FOUND,
          FailureKind.RACE, FailureKind.SNIFFING, FailureKind.SYNTAX), {Worded: _said})
