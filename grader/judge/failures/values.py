"""Wrong values: mismatch, unwritten, nonfinite, a property that fails, an output read too early."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from grader.judge.failures.catalogue import VALUE_KINDS, FailureKind, register, word
from grader.judge.failures.words import READ_EARLY, _element, at_line, fmt_index, fmt_value, look_alike_note, plural

_REDUCED = " (after the host's reduction of what the kernel wrote)"


_STRAY_LOADS = (" Some values are huge or infinite, as when a load strays past its tensor into the "
                "grader's guard region: run with --device cpu to have every load checked.")


@dataclass(frozen=True)
class Element:
    """One element of an output: where it is, the kernel's value and the spec's."""

    index: tuple[int, ...]
    yours: float
    expected: float


@dataclass(frozen=True)
class Mismatch:
    kind: ClassVar = FailureKind.MISMATCH
    name: str
    wrong: int
    total: int
    max_err: float
    atol: float
    rtol: float
    shown: tuple[Element, ...]
    reduced: bool = False  # compared after the host's reduction of what the kernel wrote
    stray: bool = False    # on a GPU, values that look read from the guard region
    baseline: str = ""     # --bench: the tolerance also allows twice this baseline's own error...
    allowance: float = 0.0  # ... which is at most this...
    strays: int = -1        # ... for at most this many elements whatever their magnitude
    row_zero_only: bool = False  # row 0 right, every later row wrong (3 rows or more)


# Row 0 right and every later row wrong: what a row offset of `row * stride` with a wrong stride gives.
def _stride_signature(f: Mismatch) -> str:
    what = (f"`{f.name}[0]` is right and every later element is wrong" if len(f.shown[0].index) == 1 else
            f"Row 0 of `{f.name}` is right and every later row is wrong")
    return (f" {what}: the signature of a wrong row stride. A row's offset is `row * stride`, and the "
            f"stride is the tensor's row length, not a block size.")


def _mismatch(f: Mismatch) -> str:
    shown = "; ".join(f"{fmt_index(e.index)}: yours {fmt_value(e.yours)}, expected {fmt_value(e.expected)}"
                      for e in f.shown)
    widened = (f" plus twice {f.baseline}'s own error at that magnitude on the same inputs; up to twice its "
               f"largest, {f.allowance:.3g}, for at most {plural(max(f.strays, 0), 'element')}" if f.baseline else "")
    return (f"wrong values in `{f.name}`{_REDUCED if f.reduced else ''}: {f.wrong} of {f.total} elements differ "
            f"(max abs err {f.max_err:.3g}, tolerance atol={f.atol:g}, rtol={f.rtol:g}{widened}). {shown}"
            + ("." + _stride_signature(f) if f.row_zero_only else "") + (_STRAY_LOADS if f.stray else ""))


@dataclass(frozen=True)
class PropertyFailed:
    """Graded by properties (``Puzzle.check``): what the runs of a case show wrong, in the
    puzzle's words, which say what was yours and what was expected."""

    kind: ClassVar = FailureKind.MISMATCH
    name: str
    what: str


def _property_failed(f: PropertyFailed) -> str:
    return f"wrong values in `{f.name}`: {f.what}"


@dataclass(frozen=True)
class Unwritten:
    kind: ClassVar = FailureKind.UNWRITTEN
    name: str
    count: int
    total: int
    first: tuple[tuple[int, ...], ...]  # the first few never written


def _unwritten(f: Unwritten) -> str:
    where = ", ".join(fmt_index(index) for index in f.first)
    what = f"no element of `{f.name}` was written" if f.count == f.total else \
        f"{f.count} of {f.total} elements of `{f.name}` were never written (first at {where})"
    return (f"{what}. Every output element must be stored: check that the grid and your offsets cover "
            f"all of `{f.name}` and that the store's mask is not too strict.")


@dataclass(frozen=True)
class LargeInputs:
    """A case whose inputs are scaled up, and what the learner's kernel does with them: its
    message speaks of exp() only where the kernel exponentiates, and of chunks only where it
    loops (puzzle 18 loads its row as one block)."""

    scale: float
    exponentiates: bool = True
    loops: bool = True


@dataclass(frozen=True)
class Nonfinite:
    kind: ClassVar = FailureKind.NONFINITE
    name: str
    count: int
    first: Element
    large_inputs: LargeInputs | None = None  # the case's inputs are scaled up
    reduced: bool = False
    stray: bool = False


def _nonfinite_finding(f: Nonfinite) -> str:
    """What went wrong, without the general advice a look-alike's note replaces."""
    return (f"`{f.name}`{_REDUCED if f.reduced else ''} has {f.count} NaN/Inf value(s) where the spec is "
            f"finite, first at {fmt_index(f.first.index)}: yours {fmt_value(f.first.yours)}, "
            f"expected {fmt_value(f.first.expected)}.")


def _large_inputs(big: LargeInputs) -> str:
    said = f"This case's inputs are large (scaled by {big.scale:g})"
    if not big.exponentiates:
        return (f"{said}: look for a value computed from them that overflows float32 (a square, a product), or a "
                f"difference of two large values such as E[x²] - mean², which rounding can make negative: "
                f"centre the values (x - mean) before squaring them.")
    where = ("keep a running maximum over every chunk your loop loads, started at -inf, not 0" if big.loops else
             "take the maximum over the whole loaded row (`tl.max`), its padding loaded as -inf")
    return (f"{said}: exp() of them overflows float32, or underflows to 0 so that a sum of them is 0. "
            f"Subtract the row's maximum before exponentiating (exp(x - max) is at most 1): {where}.")


def _nonfinite(f: Nonfinite) -> str:
    hint = (_large_inputs(f.large_inputs) if f.large_inputs else
            "Look for a division by zero, a log of a non-positive value, or exp() overflowing.")
    return f"{_nonfinite_finding(f)} {hint}{_STRAY_LOADS if f.stray else ''}"


@dataclass(frozen=True)
class LooksLike:
    """Wrong values that a look-alike (:class:`grader.course.puzzle.LookAlike`) computes too: the
    value check's own facts (of ``kind``), and the look-alike its message then names."""

    kind: FailureKind
    facts: Any
    look: Any


def _looks_like(f: LooksLike) -> str:
    return look_alike_note(finding(f.facts) or word(f.facts), f.look)


@dataclass(frozen=True)
class GapFill:
    """Output elements holding the fill the grader leaves in the gaps between a strided input's
    rows: the kernel stored what it read there. Elements never stored hold that same fill, so
    these are told apart only by a look-alike that reads the gaps (grader.judge.plan.row_gaps_look_alike)."""

    kind: ClassVar = FailureKind.MISMATCH
    name: str
    count: int
    total: int
    first: tuple[tuple[int, ...], ...]


def _gap_fill(f: GapFill) -> str:
    where = ", ".join(fmt_index(index) for index in f.first)
    return (f"{f.count} of {f.total} elements of `{f.name}` hold the fill the grader leaves between an input's "
            f"rows (first at {where}): your kernel read memory between rows")


@dataclass(frozen=True)
class FillChanged:
    """What a case's result did when its outputs' unwritten memory held other values (stale ones,
    as a GPU's does) in a second run: ``tensor``'s element ``index`` came out ``after``, not
    ``before``; or the run failed (``failed``: the failure's kind, the values then unused)."""

    tensor: str
    index: int
    shape: tuple[int, ...]
    before: float = 0.0
    after: float = 0.0
    failed: str = ""


@dataclass(frozen=True)
class ReadEarly:
    """An output loaded before anything was stored to it (interpreter only): the cause of the
    wrong values, NaN or unwritten elements ``kind`` says, and their message instead; or
    (``changed``) the cause of a right result that changes with what the outputs held before the
    kernel ran. ``index`` -1: no read was seen (a GPU's run), only the change."""

    kind: FailureKind
    tensor: str
    program: tuple[int, ...]
    index: int
    shape: tuple[int, ...]
    line: int | None = None
    source: str = ""
    changed: FillChanged | None = None


_STALE = ("On a GPU an output starts with whatever its memory last held (old values, neither zeros nor NaN), "
          "so this result would be garbage there.")


def _depends_on_fill(f: ReadEarly) -> str:
    c, tensor = f.changed, f.tensor
    if f.index < 0:
        read = "your kernel read memory of it that no program had stored yet"
    elif "atomic_" in f.source:
        read = (f"program {tuple(f.program)} updated {tensor}{_element(f.index, f.shape)} atomically"
                f"{at_line(f.line, f.source)}, and an atomic reads the element it updates, which no program had "
                f"stored yet")
    else:
        read = (f"program {tuple(f.program)} loaded {tensor}{_element(f.index, f.shape)}{at_line(f.line, f.source)}, "
                f"which no program had stored yet")
    then = (f"the run failed ({c.failed})" if c.failed else
            f"{c.tensor}{_element(c.index, c.shape)} came out {fmt_value(c.after)} instead of {fmt_value(c.before)}")
    return (f"you read `{tensor}` {READ_EARLY}, and the result depends on what it held: {read}. When the grader ran "
            f"this case again with other values in the memory no program had stored yet, {then}. {_STALE} Fix: store "
            f"every element before reading it, or start from `tl.zeros` in a variable "
            f"(`acc = tl.zeros([B0], dtype=tl.float32)`) and store `{tensor}` once it is final.")


def _read_early(f: ReadEarly) -> str:
    if f.changed is not None:
        return _depends_on_fill(f)
    tensor = f.tensor
    if "atomic_" in f.source:  # the write log counts an atomic's read of what it updates (grader.sandbox.write_log)
        return (f"read `{tensor}` {READ_EARLY}: program {tuple(f.program)} updated "
                f"{tensor}{_element(f.index, f.shape)} atomically{at_line(f.line, f.source)}, and an atomic reads "
                f"the element it updates, which no program had stored yet. An output holds garbage until your kernel "
                f"stores to it (the grader fills it with NaN; the puzzle says which outputs start as zeros), so "
                f"the value read means nothing. Fix: store `{tensor}` first (`tl.store`), or keep the running value "
                f"in a variable (`acc = tl.zeros([B0], dtype=tl.float32)`) and store it once it is final.")
    return (f"loaded `{tensor}` {READ_EARLY}: program {tuple(f.program)} read "
            f"{tensor}{_element(f.index, f.shape)}{at_line(f.line, f.source)}, "
            f"which no program had stored yet. An output holds garbage until your kernel stores to it (the grader "
            f"fills it with NaN), so the value loaded means nothing. Fix: keep the running value in a variable "
            f"(`acc = tl.zeros([B0], dtype=tl.float32)`), and store `{tensor}` once it is final.")


def finding(facts) -> str:
    """The message without its general advice ("Look for a division by zero, ..."): what a
    look-alike's note replaces, since it names the cause itself. "" where there is none."""
    if isinstance(facts, Mismatch) and facts.row_zero_only:  # a look-alike names the cause better than a signature
        return _mismatch(replace(facts, row_zero_only=False))
    return _nonfinite_finding(facts) if isinstance(facts, Nonfinite) else ""


register(FailureKind.MISMATCH, {Mismatch: _mismatch, PropertyFailed: _property_failed, GapFill: _gap_fill})
register(FailureKind.UNWRITTEN, {Unwritten: _unwritten})
register(FailureKind.NONFINITE, {Nonfinite: _nonfinite})
register(VALUE_KINDS, {ReadEarly: _read_early, LooksLike: _looks_like})
