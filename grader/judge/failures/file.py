"""The file: no such kernel, not a kernel."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from grader.judge.failures.catalogue import FailureKind, register


@dataclass(frozen=True)
class NoKernel:
    kind: ClassVar = FailureKind.NOT_FOUND
    name: str
    file: str
    defined: tuple[str, ...]  # the kernels the file does define
    expected: str             # the stub's def line
    decorator: str = "@triton.jit"  # the kind's: a Helion puzzle's is @helion.kernel


def _no_kernel(f: NoKernel) -> str:
    found = ", ".join(f.defined) or "no @triton.jit kernels"
    return (f"no kernel named `{f.name}` in {f.file} (it defines {found}). "
            f"Expected: {f.decorator} def {f.expected}")


@dataclass(frozen=True)
class Dropped:
    """The kernel is in the file, but a line the grader leaves out of the import (``reason``) holds it."""

    kind: ClassVar = FailureKind.NOT_FOUND
    name: str
    file: str
    line: int
    text: str
    reason: str
    expected: str
    decorator: str = "@triton.jit"


def _dropped(f: Dropped) -> str:
    return (f"`{f.name}` in {f.file} was not imported: line {f.line} "
            f"`{f.text}`: {f.reason}. Expected: {f.decorator} def {f.expected}")


@dataclass(frozen=True)
class NotCallable:
    """The name is there, but not what the puzzle calls: the worker's ``reason`` where it gave one,
    else a kernel without @triton.jit; for an autograd puzzle (``function``), not a Function."""

    kind: ClassVar = FailureKind.SIGNATURE
    name: str
    reason: str = ""
    function: bool = False


def _not_callable(f: NotCallable) -> str:
    if f.function:
        return (f"`{f.name}` must be a subclass of torch.autograd.Function "
                "with static forward and backward methods.")
    return f.reason or f"`{f.name}` is not a Triton kernel: decorate it with @triton.jit."


register(FailureKind.SIGNATURE, {NotCallable: _not_callable})
register(FailureKind.NOT_FOUND, {NoKernel: _no_kernel, Dropped: _dropped})
