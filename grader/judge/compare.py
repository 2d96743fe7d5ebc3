"""Deciding one case from the bytes a kernel left behind, in the grader's own process.

The checks run in the order that explains the most: stores outside a tensor first (they can
explain everything after), then writes into inputs, elements never written, NaN/Inf where the
spec is finite, and finally wrong values.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import torch

from grader.judge.fence import Buffer, GuardDamage, is_unwritten, unpack
from grader.judge.results import LOOKS_LIKE

SHOW = 3  # wrong elements listed in a message


@dataclass(frozen=True)
class Outcome:
    passed: bool
    kind: str | None = None
    message: str = ""
    max_abs_err: float | None = None
    # The message without its general advice ("Look for a division by zero, ..."): what a
    # look-alike's note replaces, since it names the cause itself. "" when there is none.
    finding: str = ""


def index_of(flat: int, shape: Sequence[int]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        index.append(flat % size if size else 0)
        flat //= max(size, 1)
    return tuple(reversed(index))


def fmt_index(index: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, index)) + ")" if len(index) != 1 else f"({index[0]})"


def plural(count: int, noun: str) -> str:
    """``1 element``, ``2 elements``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def fmt_value(value: float) -> str:
    return f"{value:.6g}"


def _damage_message(buf: Buffer, damage: GuardDamage) -> str:
    parts = []
    if damage.after is not None:
        first, last = damage.after
        parts.append(f"elements {first}..{last} past its end" if last > first else f"element {first} past its end")
    if damage.before is not None:
        first, last = damage.before
        parts.append(f"elements {first}..{last} before its start" if last > first else f"element {first} before its start")
    what = "output" if buf.role == "output" else "input"
    return (f"out-of-bounds store: the kernel wrote {' and '.join(parts)} of {what} `{buf.name}` "
            f"(shape {tuple(buf.shape)}, {plural(buf.numel, 'element')}; {plural(damage.count, 'stray element')}). "
            f"Fix: mask the store, e.g. `tl.store({buf.name}_ptr + offs, value, mask=offs < N0)`, "
            f"so that lanes past the end are switched off.")


def _positions(mask: torch.Tensor) -> list[int]:
    return torch.nonzero(mask.reshape(-1)).flatten()[:SHOW].tolist()


def compare(buffers: Sequence[Buffer], raw: Sequence[bytes], inputs: Sequence[torch.Tensor],
            expected: Sequence[torch.Tensor], tolerance: Callable[[str], tuple[float, float]],
            large_inputs: bool = False, on_gpu: bool = False,
            host_reduce: Mapping[str, Callable] | None = None) -> Outcome:
    """``buffers`` are the inputs', then the outputs'; ``expected`` has one tensor per output.
    ``tolerance`` gives (atol, rtol) for an output's dtype name (``Puzzle.tolerance``)."""
    unpacked = [unpack(b, r) for b, r in zip(buffers, raw)]
    for buf, (_, damage) in zip(buffers, unpacked):
        if damage is not None:
            return Outcome(False, "out_of_bounds", _damage_message(buf, damage))

    for buf, (data, _), original in zip(buffers, unpacked, inputs):
        before = original.contiguous().view(torch.uint8).reshape(-1, buf.itemsize)
        after = data.contiguous().view(torch.uint8).reshape(-1, buf.itemsize)
        changed = (before != after).any(dim=1)
        if bool(changed.any()):
            first = index_of(_positions(changed)[0], buf.shape)
            return Outcome(False, "input_modified",
                           f"the kernel wrote into input `{buf.name}`: {int(changed.sum())} element(s) changed, "
                           f"first at {fmt_index(first)}. Inputs are read-only: store only to the output pointer.")

    worst = 0.0
    outputs = list(zip(buffers[len(inputs):], unpacked[len(inputs):], expected))
    for buf, (actual, _), want in outputs:
        buf_atol, buf_rtol = tolerance(buf.dtype)
        outcome = compare_tensor(buf.name, actual, want, buf_atol, buf_rtol, large_inputs, on_gpu,
                                 (host_reduce or {}).get(buf.name))
        if not outcome.passed:
            return outcome
        worst = max(worst, outcome.max_abs_err or 0.0)
    return Outcome(True, max_abs_err=worst)


def compare_tensor(name: str, actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float,
                   large_inputs: bool = False, on_gpu: bool = False, reduce: Callable | None = None,
                   filled: bool = True) -> Outcome:
    """One output against the spec. ``filled``: the grader allocated it with its NaN fill."""
    total = actual.numel()
    unwritten = is_unwritten(actual) if filled else torch.zeros(actual.shape, dtype=torch.bool)
    if bool(unwritten.any()):
        count = int(unwritten.sum())
        where = ", ".join(fmt_index(index_of(p, actual.shape)) for p in _positions(unwritten))
        what = f"no element of `{name}` was written" if count == total else \
            f"{count} of {total} elements of `{name}` were never written (first at {where})"
        return Outcome(False, "unwritten",
                       f"{what}. Every output element must be stored: check that the grid and your offsets cover "
                       f"all of `{name}` and that the store's mask is not too strict.")

    reduced = ""
    if reduce is not None:
        actual = reduce(actual)
        reduced = " (after the host's reduction of what the kernel wrote)"
    if actual.shape != expected.shape:  # a course bug: the spec disagrees with its annotation
        raise ValueError(f"{name}: spec returned shape {tuple(expected.shape)}, compared with {tuple(actual.shape)}")
    total = actual.numel()
    actual_f, expected_f = actual.double(), expected.double()
    bad_nonfinite = ~torch.isfinite(actual_f) & torch.isfinite(expected_f)
    if bool(bad_nonfinite.any()):
        first = _positions(bad_nonfinite)[0]
        idx = index_of(first, actual.shape)
        hint = ("This case's inputs are large: exp() of them overflows float32, or underflows to 0 so that "
                "a sum of them is 0. Subtract the row's true maximum before exponentiating (exp(x - max) is at "
                "most 1): start it at -inf, not 0, and take it over every chunk." if large_inputs else
                "Look for a division by zero, a log of a non-positive value, or exp() overflowing.")
        hint += _stray_load_hint(actual_f) if on_gpu else ""
        finding = (f"`{name}`{reduced} has {int(bad_nonfinite.sum())} NaN/Inf value(s) where the spec is "
                   f"finite, first at {fmt_index(idx)}: yours {fmt_value(actual_f.reshape(-1)[first].item())}, "
                   f"expected {fmt_value(expected_f.reshape(-1)[first].item())}.")
        return Outcome(False, "nonfinite", f"{finding} {hint}", finding=finding)

    close = torch.isclose(actual_f, expected_f, rtol=rtol, atol=atol, equal_nan=True)
    finite = torch.isfinite(actual_f) & torch.isfinite(expected_f)
    err = (actual_f - expected_f).abs()
    max_err = float(err[finite].max()) if bool(finite.any()) else 0.0
    if bool(close.all()):
        return Outcome(True, max_abs_err=max_err)
    wrong = ~close
    shown = "; ".join(
        f"{fmt_index(index_of(p, actual.shape))}: yours {fmt_value(actual_f.reshape(-1)[p].item())}, "
        f"expected {fmt_value(expected_f.reshape(-1)[p].item())}" for p in _positions(wrong))
    return Outcome(False, "mismatch",
                   f"wrong values in `{name}`{reduced}: {int(wrong.sum())} of {total} elements differ "
                   f"(max abs err {max_err:.3g}, tolerance atol={atol:g}, rtol={rtol:g}). {shown}"
                   + (_stray_load_hint(actual_f) if on_gpu else ""),
                   max_abs_err=max_err)


def _stray_load_hint(actual: torch.Tensor) -> str:
    """On a GPU, loads past a tensor read the guards' huge values; say so when they show."""
    if not bool((~torch.isfinite(actual) | (actual.abs() > 1e37)).any()):
        return ""
    return (" Some values are huge or infinite, as when a load strays past its tensor into the "
            "grader's guard region: run with --device cpu to have every load checked.")


def written_outputs(buffers: Sequence[Buffer], raw: Sequence[bytes], n_inputs: int,
                    host_reduce: Mapping[str, Callable] | None = None) -> list[torch.Tensor]:
    """What the kernel left in each output, in the spec's space (after the host's reduction)."""
    out = []
    for buf, r in list(zip(buffers, raw))[n_inputs:]:
        data, _ = unpack(buf, r)
        reduce = (host_reduce or {}).get(buf.name)
        out.append(reduce(data) if reduce is not None else data)
    return out


def close_enough(a: torch.Tensor, b: torch.Tensor, atol: float, rtol: float) -> bool:
    if tuple(a.shape) != tuple(b.shape):
        return False
    return bool(torch.isclose(a.double(), b.double(), rtol=rtol, atol=atol, equal_nan=True).all())


def made_alike(actual: torch.Tensor, wrong: torch.Tensor, atol: float, rtol: float) -> bool:
    """Whether a kernel wrote what a look-alike computes. Where the look-alike has no number
    (a 0 / 0 gives NaN, its log -inf) any NaN or Inf of the kernel's matches: which one a
    kernel ends with depends only on the order of its operations. Elsewhere, within tolerance."""
    if tuple(actual.shape) != tuple(wrong.shape):
        return False
    a, w = actual.double(), wrong.double()
    close = torch.isclose(a, w, rtol=rtol, atol=atol, equal_nan=True)
    return bool(torch.where(torch.isfinite(w), close, ~torch.isfinite(a)).all())


def recognise(look_alikes: Sequence, inputs: Sequence[torch.Tensor], expected: Sequence[torch.Tensor],
              actual: Sequence[torch.Tensor], atol: float, rtol: float, sizes: Mapping[str, int],
              layouts: Mapping[str, str]):
    """The first look-alike (a :class:`grader.course.puzzle.LookAlike`) whose outputs all match what the
    kernel wrote, within the puzzle's tolerance; None if none does. A look-alike that gives the
    spec's own values on this case cannot tell the mistake here, and is passed over: so the spec's
    output is never labelled. So is one without a single finite value: that is how a look-alike
    says it cannot tell on this case, and it must not name a kernel that wrote only NaN."""
    for look in look_alikes:
        try:
            wrong = look.produce(inputs, sizes, layouts)
        except Exception:  # a course bug must not turn a learner's failure into a grader error
            continue
        if len(wrong) != len(expected):
            continue
        if not any(bool(torch.isfinite(w.double()).any()) for w in wrong):
            continue
        if all(close_enough(w, e, atol, rtol) for w, e in zip(wrong, expected)):
            continue
        if all(made_alike(a, w, atol, rtol) for a, w in zip(actual, wrong)):
            return look
    return None


def look_alike_note(message: str, look) -> str:
    """The message with the look-alike's sentence added, after a full stop."""
    message = message.rstrip()
    return f"{message}{'' if message.endswith('.') else '.'} {LOOKS_LIKE} {look.name}: {look.where.rstrip('.')}."
