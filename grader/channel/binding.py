"""Binding a kernel's parameters from its own signature.

The first parameters are pointers: the spec's arguments in order, then the output. Every
later parameter is passed by name from the case's sizes and blocks, and only those the
kernel declares. So a kernel written for the original notebook (say, p9 without ``B1``)
grades unchanged, and a parameter the puzzle never provides is a clear error.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from grader.course.dtypes import DTYPES


@dataclass(frozen=True)
class Param:
    name: str
    constexpr: bool


@dataclass(frozen=True)
class Binding:
    pointers: tuple[str, ...]     # kernel parameter names that receive the tensors
    named: Mapping[str, int]      # everything else the puzzle passes, by name
    defaults: Mapping[str, object] = None  # parameters left to their default value
    provided: frozenset = frozenset()      # parameters an autotuner or heuristics set

    def compile_signature(self, params: Sequence[Param], dtypes: Sequence[str]) -> tuple[dict, dict]:
        """``ASTSource`` signature and constexprs for compiling exactly this call."""
        signature, constexprs = {}, {}
        for param, dtype in zip(params, dtypes):
            signature[param.name] = "*" + DTYPES[dtype].triton
        for param in params[len(dtypes):]:
            if param.name in self.provided:
                continue  # the worker adds each config's and heuristic's value
            value = self.named[param.name] if param.name in self.named else (self.defaults or {})[param.name]
            # Like a real launch, an integer argument equal to 1 is specialised into a constant.
            if param.constexpr or value == 1 or not isinstance(value, int) or isinstance(value, bool):
                signature[param.name] = "constexpr"
                constexprs[param.name] = value
            else:
                signature[param.name] = "i32"
        return signature, constexprs


class BindingError(Exception):
    pass


def bind(params: Sequence[Param], pointer_names: Sequence[str], values: Mapping[str, int],
         expected: str, provided=frozenset(), defaults: Mapping[str, object] | None = None) -> Binding:
    """``provided``: parameters an autotuner's configs or heuristics set (never passed);
    ``defaults``: parameters with a default value, used when the puzzle has no value of its own."""
    defaults = defaults or {}
    n = len(pointer_names)
    if len(params) < n:
        raise BindingError(
            f"the kernel takes {len(params)} parameters, but this puzzle passes {n} pointers "
            f"({', '.join(f'{p}_ptr' for p in pointer_names)}) before the sizes.\n"
            f"Expected signature: {expected}"
        )
    for param in params[:n]:
        if param.name in values:
            raise BindingError(
                f"parameter {param.name!r} stands where a pointer belongs: the first {n} parameters "
                f"receive {', '.join(f'{p}_ptr' for p in pointer_names)}.\nExpected signature: {expected}"
            )
    named, defaulted = {}, {}
    for param in params[n:]:
        if param.name in provided:
            continue
        if param.name not in values and param.name in defaults:
            defaulted[param.name] = defaults[param.name]
            continue
        if param.name not in values:
            offered = ", ".join(values)
            raise BindingError(
                f"kernel parameter {param.name!r} is not something this puzzle passes "
                f"(it passes {offered} by name). If it is a parameter of your own, give it a default "
                f"(`{param.name}: tl.constexpr = ...`) or compute it with @triton.heuristics."
                f"\nExpected signature: {expected}"
            )
        named[param.name] = int(values[param.name])
    return Binding(pointers=tuple(p.name for p in params[:n]), named=named, defaults=defaulted,
                   provided=frozenset(provided))
