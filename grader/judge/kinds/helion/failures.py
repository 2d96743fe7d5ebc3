"""Helion kernels: the work must be in the tiles. The Helion kind's own family of failures (its facts
and their words, registered into the catalogue, grader.judge.failures, when imported)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from grader.judge.failures import FailureKind, register, word
from grader.judge.failures.words import _where, at_line, fmt_index, fmt_shape, plural


@dataclass(frozen=True)
class HostWork:
    """A Helion kernel computed outside its ``hl.tile`` loops (``loops`` False: it has none):
    ``ops`` the PyTorch operations its host code ran on tensor data, on its parameters ``tensors``,
    inside the helper function ``called`` (its line ``called_line``) where it called one."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    name: str
    line: int | None
    source: str
    loops: bool = True
    ops: tuple[str, ...] = ()
    tensors: tuple[str, ...] = ()
    called: str = ""
    called_line: int | None = None
    called_source: str = ""
    tensor: str = "x"  # the kernel's first parameter: the fix's example indexes it, not a name it lacks


def _host_work(f: HostWork) -> str:
    t = f.tensors[0] if f.tensors else f.tensor
    if not f.loops:
        return (f"`{f.name}` has no `hl.tile` loop, so Helion generates no Triton kernel from it: all it does is "
                f"computed with PyTorch on the host{_where(f.line, f.source)}. Fix: put the work inside "
                f"`for tile in hl.tile(...)` loops, on the tiles (`{t}[tile]`), storing into the output's tiles.")
    if f.ops[:1] == ("made unseen",):  # grader.sandbox.kinds.helion.host.UNSEEN: judged by where memory came from
        did = "returns" if f.ops[1:] == ("returned",) else "hands its `hl.tile` loops"
        which = f"`{f.tensors[0]}`" if f.tensors else "a tensor"
        return (f"`{f.name}` {did} {which}{_where(f.line, f.source)}, whose memory is not an input's, a view of "
                f"one, or an allocation of its host code: it was made on the host where the grader's watch of "
                f"PyTorch did not see it (a dispatch mode switched off, a tensor subclass, PyTorch's internals), "
                f"so it holds PyTorch's result, not the Triton kernel Helion generates. Fix: outside the loops, "
                f"only allocate the outputs (`torch.empty_like({f.tensor})`, `{f.tensor}.new_zeros(...)`) "
                f"and take views and sizes; compute in the `hl.tile` loop, on the tiles (`{f.tensor}[tile]`).")
    what = ""
    if f.ops:
        on = f" on {', '.join(f'`{t}`' for t in f.tensors)}" if f.tensors else ""
        what = f": PyTorch ran {', '.join(f'`{o}`' for o in f.ops)}{on} there, on the host"
        if f.called:
            what += f", inside `{f.called}`{_where(f.called_line, f.called_source)}"
    return (f"`{f.name}` computed with PyTorch outside its `hl.tile` loops{_where(f.line, f.source)}{what}. Helion "
            f"runs code outside the loops on the host as whole-tensor PyTorch, so that is PyTorch's result, not "
            f"the Triton kernel Helion generates. Fix: move the computation into the `hl.tile` loop, on the "
            f"tiles (`{t}[tile]`); outside the loops, only allocate the outputs (`torch.empty_like({t})`, "
            f"`{t}.new_zeros(...)`), take views and sizes, and return them.")


_HELION_FIXES = [
    # a module-level name the definitions-only import left out: the note says which line, and why
    (r"was not run: ", "write that value at module level as data (numbers, lists, dicts, dtypes), or compute it "
                       "inside the kernel."),
    # Two sizes Helion only knows symbolically (u0, u1: tiles, reductions) do not line up: most
    # often a reduction that dropped its dimension meets the tile it was taken over.
    (r"size of tensor a \(u\d+\) must match the size of tensor b \(u\d+\)",
     "two values of different shapes meet on this line (one's dimension is another tile's or reduction's). "
     "Most often a reduction dropped its dimension: `torch.amax(row, dim=1)` is one value per row, shape "
     "[rows], and lines up with `row` ([rows, cols]) only as a column: `torch.amax(row, dim=1, keepdim=True)`, "
     "or `m[:, None]`."),
    (r"must match the size of tensor|size of tensor a .* must match|broadcast",
     "a tile's values (`x[tile]`) and a whole tensor (`x`) do not broadcast: index every tensor inside the "
     "loop with the tiles, e.g. `x[tile] + y[tile]`."),
    (r"NoDeviceLoops|no device loops", "put the work inside `for tile in hl.tile(n):`."),
    (r"[Nn]ot supported|[Uu]nsupported",
     "this line uses something Helion cannot lower to Triton: write it with PyTorch operations on the tiles "
     "(`torch.exp`, `torch.sum(v, dim=-1)`, `+`, `*`...), or `hl.*` functions."),
]


@dataclass(frozen=True)
class HelionRejected:
    """Helion's compiler refused a learner's kernel, at their line."""

    kind: ClassVar = FailureKind.COMPILE
    error: str
    line: int | None
    source: str


def _helion_rejected(f: HelionRejected) -> str:
    reason = f.error.strip().removeprefix("Helion's compiler: ").strip() or "unknown error"
    fix = next((fix for pattern, fix in _HELION_FIXES if re.search(pattern, reason)),
               "make the line valid in a Helion kernel: tensors indexed with tiles inside `hl.tile` loops, "
               "outputs allocated before the loops.")
    return (f"the kernel does not compile for a GPU (sm_90): Helion's compiler rejects it{at_line(f.line, f.source)}: "
            f"{reason.rstrip('.')}. Fix: {fix}")


@dataclass(frozen=True)
class LoweringDisagrees:
    """The Triton Helion generated, run tile by tile, disagrees with Helion's interpreter (each
    ``hl.tile`` loop one tile), which gives the spec's values: the kernel depends on its tiles,
    or Helion lowered it wrongly. ``found``: the tiled run's mismatch, worded; ``elements``:
    (index, the tiled run's value, the interpreter's) where they differ."""

    kind: ClassVar = FailureKind.MISMATCH
    output: str
    found: str
    elements: tuple[tuple[tuple[int, ...], float, float], ...]


def _lowering_disagrees(f: LoweringDisagrees) -> str:
    both = "; ".join(f"{fmt_index(i)}: tiled {tiled:.6g}, interpreter {one:.6g}" for i, tiled, one in f.elements)
    return (f"{f.found.rstrip('.')}. Helion's interpreter, which runs each hl.tile loop as one tile, gives the "
            f"spec's values from the same kernel, and the two disagree in `{f.output}` ({both}). Either the "
            f"kernel's result depends on its tile sizes (a tile's offset, one chunk's statistics taken for the "
            f"row's), or Helion's compiler lowered it to Triton wrongly: if your code does not depend on its "
            f"tiles, the compiler may be at fault; compare the Triton it generated (--verbose) with your code.")


@dataclass(frozen=True)
class GeneratedCompile:
    """The Triton code Helion generated from a learner's kernel does not compile for sm_90."""

    kind: ClassVar = FailureKind.COMPILE
    kernel: str
    case: str
    failed: Any  # the compile family's CompileFailed, worded through the catalogue


def _generated_compile(f: GeneratedCompile) -> str:
    return (f"GPU compile check of `{f.kernel}`, the Triton Helion generated for {f.case}: "
            f"{word(f.failed)}")


@dataclass(frozen=True)
class ReturnCount:
    """A Helion kernel returned another number of values than the spec."""

    kind: ClassVar = FailureKind.SHAPE
    name: str
    got: int
    outputs: tuple[str, ...]


def _return_count(f: ReturnCount) -> str:
    names = ", ".join(f.outputs)
    return (f"`{f.name}` returned {plural(f.got, 'value')}; expected {len(f.outputs)} ({names}). Fix: "
            f"`return {names}`, the tensors the kernel allocated and filled.")


@dataclass(frozen=True)
class HelionWrongOutput:
    """A Helion kernel returned an output of another shape or dtype than the spec's."""

    kind: ClassVar = FailureKind.SHAPE
    kernel: str
    output: str
    shape: tuple[int, ...]
    dtype: str
    expected_shape: tuple[int, ...]
    expected_dtype: str


def _helion_wrong_output(f: HelionWrongOutput) -> str:
    got, want = f"{fmt_shape(f.shape)} {f.dtype}", f"{fmt_shape(f.expected_shape)} {f.expected_dtype}"
    fixes = []
    if tuple(f.shape) != tuple(f.expected_shape):
        fixes.append(f"allocate it with the spec's shape, {fmt_shape(f.expected_shape)}")
    if f.dtype != f.expected_dtype:
        fixes.append(f"allocate it as {f.expected_dtype} (`torch.empty_like(x)` takes x's dtype; "
                     f"`torch.empty([...], dtype=torch.{f.expected_dtype}, device=x.device)` names it): Helion "
                     f"rounds what a tile stores to the output's dtype")
    return f"`{f.kernel}` returned `{f.output}` as {got}, expected {want}. Fix: {'; '.join(fixes)}."


register(FailureKind.MISMATCH, {LoweringDisagrees: _lowering_disagrees})
register(FailureKind.COMPILE, {HelionRejected: _helion_rejected, GeneratedCompile: _generated_compile})
register(FailureKind.SHAPE, {ReturnCount: _return_count, HelionWrongOutput: _helion_wrong_output})
register(FailureKind.TORCH_COMPUTE, {HostWork: _host_work})
