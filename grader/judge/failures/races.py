"""Races: two programs storing one element, an order-dependent result, a program reading another's part."""
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
    """A program loaded an element of an output another program of the same launch stores
    (``loaded``), or stored one another had loaded; nothing atomic could order them."""

    kind: ClassVar = FailureKind.RACE
    tensor: str
    program: tuple[int, ...]
    other: tuple[int, ...]
    index: int
    shape: tuple[int, ...]
    loaded: bool
    line: int | None = None
    source: str = ""


def _read_across(f: ReadAcross) -> str:
    named = f.tensor.isidentifier()  # an output by its name, else "a tensor of shape (...) your code allocated"
    element = f"{f.tensor}{_element(f.index, f.shape)}" if named else \
        f"element {_element(f.index, f.shape)} of {f.tensor}"
    part = f"`{f.tensor}`" if named else "it"
    other = "another program of the same launch" + (f", {tuple(f.other)}," if f.other else "")
    met = (f"loaded {element}{at_line(f.line, f.source)}, which it had not stored itself: {other} stored it"
           if f.loaded else f"stored {element}{at_line(f.line, f.source)}, which {other} loaded")
    return (f"a race: program {tuple(f.program)} {met}. On a GPU the programs of a launch run at the same time, in "
            f"no set order, so what one stores may or may not be there when another loads it. Fix: have each "
            f"program compute its part from the "
            f"inputs alone, without loading back another program's part of {part}; combine parts with atomics "
            f"(`tl.atomic_add`) or in a second launch.")


register(FailureKind.RACE, {Overlap: _overlap, OrderDependent: _order_dependent, ReadAcross: _read_across})
