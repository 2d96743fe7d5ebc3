"""Races: two programs storing one element, an order-dependent result, a read of another program's part."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from grader.judge.failures.catalogue import FailureKind, register
from grader.judge.failures.words import _element, at_line, fmt_index


@dataclass(frozen=True)
class Overlap:
    """Two programs stored different values to one element, without an atomic."""

    kind: ClassVar = FailureKind.RACE
    tensor: str
    programs: tuple[tuple[int, ...], tuple[int, ...]]
    index: int
    shape: tuple[int, ...]
    line: int | None = None
    source: str = ""


def _overlap(f: Overlap) -> str:
    a, b = (tuple(p) for p in f.programs)
    tensor = f.tensor
    return (f"a race: programs {a} and {b} both store to {tensor}{_element(f.index, f.shape)}"
            f"{at_line(f.line, f.source)}, with different values and no atomic. "
            f"The interpreter runs programs one after another, but a GPU runs them at the same time, so which "
            f"value stays (or whether an update is lost) depends on timing. Fix: give every element of `{tensor}` "
            f"to exactly one program, or combine the programs' contributions with `tl.atomic_add`.")


@dataclass(frozen=True)
class OrderDependent:
    """Running the programs in reverse order changed an output."""

    kind: ClassVar = FailureKind.RACE
    tensor: str
    count: int
    shown: tuple[tuple[tuple[int, ...], float, float], ...]  # (index, in order, reversed), the first few


def _order_dependent(f: OrderDependent) -> str:
    shown = "; ".join(f"{fmt_index(index)}: {a:.6g} in order, {b:.6g} reversed" for index, a, b in f.shown)
    return (f"a race: running the programs in reverse order changed {f.count} element(s) of `{f.tensor}` "
            f"({shown}). On a GPU programs run at the same time, in no set order, so a program must not depend "
            f"on what another one stored. Fix: have each program compute its part from the inputs alone, or "
            f"combine the programs' contributions with atomics (`tl.atomic_add`).")


@dataclass(frozen=True)
class ReadAcross:
    """In a large case, where only a sample of the programs runs: a program loaded an output
    element it had not stored itself (another program's, or nobody's yet)."""

    kind: ClassVar = FailureKind.RACE
    tensor: str
    program: tuple[int, ...]
    index: int
    shape: tuple[int, ...]
    written: bool  # another program that ran had stored it
    ran: int
    programs: int
    line: int | None = None
    source: str = ""


def _read_across(f: ReadAcross) -> str:
    held = "another program's value" if f.written else "the grader's NaN fill"
    return (f"a race: program {tuple(f.program)} loaded {f.tensor}{_element(f.index, f.shape)}"
            f"{at_line(f.line, f.source)}, an element of the output `{f.tensor}` it had not stored itself. "
            f"This case runs {f.ran} of the launch's {f.programs} programs, so the element held {held}; on a GPU "
            f"programs run at the same time, in no set order, and what another program stores may not be there "
            f"yet. Fix: have each program compute its part from the inputs alone, and store `{f.tensor}` "
            f"without loading it back from another program's part.")


@dataclass(frozen=True)
class ReadAcrossLaunch:
    """In a large case of an autograd puzzle, where only a sample of each launch's programs runs:
    a program loaded what another program of the same launch had stored."""

    kind: ClassVar = FailureKind.RACE
    tensor: str  # which memory: an input by name, or a tensor the wrapper allocated, by its shape
    program: tuple[int, ...]
    index: int  # the element, in that memory
    line: int | None = None
    source: str = ""


def _read_across_launch(f: ReadAcrossLaunch) -> str:
    return (f"a race: program {tuple(f.program)} loaded element {f.index} of {f.tensor}{at_line(f.line, f.source)}, "
            f"which another program of the same launch had stored. On a GPU the programs of a launch run at the "
            f"same time, in no set order, and what another program stores may not be there yet. Fix: have each "
            f"program compute its part from what earlier launches stored, and launch again where a result needs "
            f"every program's part.")


register(FailureKind.RACE, {Overlap: _overlap, OrderDependent: _order_dependent, ReadAcross: _read_across,
                            ReadAcrossLaunch: _read_across_launch})
