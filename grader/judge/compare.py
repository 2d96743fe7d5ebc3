"""Deciding one case from the bytes a kernel left behind, in the grader's own process.

The checks run in the order that explains the most: stores outside a tensor first (they can
explain everything after), then writes into inputs, elements never written, NaN/Inf where the
spec is finite, and finally wrong values.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import torch

from grader.judge.failures import (
    Element,
    InputModified,
    LargeInputs,
    Mismatch,
    Nonfinite,
    OrderDependent,
    StrayStore,
    Unwritten,
    fmt_index,
    fmt_value,
    index_of,
    look_alike_note,
    plural,
    word,
)
from grader.judge.failures import finding as value_finding
from grader.judge.fence import Buffer, GuardDamage, is_unwritten, unpack

# What the checks find is worded by the failures' catalogue; fmt_index, fmt_value, index_of,
# look_alike_note and plural are imported from here as they always were.
__all__ = ["Comparison", "compare", "compare_tensor", "written_outputs", "close_enough", "made_alike", "recognise",
           "order_changed", "fmt_index", "fmt_value", "index_of", "look_alike_note", "plural"]

SHOW = 3  # wrong elements listed in a message


@dataclass(frozen=True)
class Comparison:
    """What comparing one case's outputs with the spec's found: passed, or the facts of why not."""

    passed: bool
    kind: str | None = None
    message: str = ""
    max_abs_err: float | None = None
    # The message without its general advice ("Look for a division by zero, ..."): what a
    # look-alike's note replaces, since it names the cause itself. "" when there is none.
    finding: str = ""
    facts: object = None  # what the check found (grader.judge.failures), which the message words

    @classmethod
    def failed(cls, facts, max_abs_err: float | None = None) -> "Comparison":
        return cls(False, facts.kind, word(facts), max_abs_err, value_finding(facts), facts)


def _stray_store(buf: Buffer, damage: GuardDamage) -> StrayStore:
    return StrayStore(buf.name, buf.role, tuple(buf.shape), buf.numel, damage.count, damage.after, damage.before)


def _positions(mask: torch.Tensor) -> list[int]:
    return torch.nonzero(mask.reshape(-1)).flatten()[:SHOW].tolist()


def compare(buffers: Sequence[Buffer], raw: Sequence[bytes], inputs: Sequence[torch.Tensor],
            expected: Sequence[torch.Tensor], tolerance: Callable[[str], tuple[float, float]],
            large_inputs: LargeInputs | None = None, on_gpu: bool = False,
            host_reduce: Mapping[str, Callable] | None = None) -> Comparison:
    """``buffers`` are the inputs', then the outputs'; ``expected`` has one tensor per output.
    ``tolerance`` gives (atol, rtol) for an output's dtype name (``Puzzle.tolerance``)."""
    unpacked = [unpack(b, r) for b, r in zip(buffers, raw)]
    for buf, (_, damage) in zip(buffers, unpacked):
        if damage is not None:
            return Comparison.failed(_stray_store(buf, damage))

    for buf, (data, _), original in zip(buffers, unpacked, inputs):
        before = original.contiguous().view(torch.uint8).reshape(-1, buf.itemsize)
        after = data.contiguous().view(torch.uint8).reshape(-1, buf.itemsize)
        changed = (before != after).any(dim=1)
        if bool(changed.any()):
            first = index_of(_positions(changed)[0], buf.shape)
            return Comparison.failed(InputModified(buf.name, int(changed.sum()), first))

    worst = 0.0
    outputs = list(zip(buffers[len(inputs):], unpacked[len(inputs):], expected))
    for buf, (actual, _), want in outputs:
        buf_atol, buf_rtol = tolerance(buf.dtype)
        outcome = compare_tensor(buf.name, actual, want, buf_atol, buf_rtol, large_inputs, on_gpu,
                                 (host_reduce or {}).get(buf.name))
        if not outcome.passed:
            return outcome
        worst = max(worst, outcome.max_abs_err or 0.0)
    return Comparison(True, max_abs_err=worst)


def compare_tensor(name: str, actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float,
                   large_inputs: LargeInputs | None = None, on_gpu: bool = False, reduce: Callable | None = None,
                   filled: bool = True) -> Comparison:
    """One output against the spec. ``filled``: the grader allocated it with its NaN fill."""
    total = actual.numel()
    unwritten = is_unwritten(actual) if filled else torch.zeros(actual.shape, dtype=torch.bool)
    if bool(unwritten.any()):
        first = tuple(index_of(p, actual.shape) for p in _positions(unwritten))
        return Comparison.failed(Unwritten(name, int(unwritten.sum()), total, first))

    reduced = reduce is not None
    if reduced:
        actual = reduce(actual)
    if actual.shape != expected.shape:  # a course bug: the spec disagrees with its annotation
        raise ValueError(f"{name}: spec returned shape {tuple(expected.shape)}, compared with {tuple(actual.shape)}")
    total = actual.numel()
    actual_f, expected_f = actual.double(), expected.double()
    bad_nonfinite = ~torch.isfinite(actual_f) & torch.isfinite(expected_f)
    if bool(bad_nonfinite.any()):
        first = _element(_positions(bad_nonfinite)[0], actual_f, expected_f)
        return Comparison.failed(Nonfinite(name, int(bad_nonfinite.sum()), first, large_inputs, reduced,
                                        on_gpu and _stray_loads(actual_f)))

    close = torch.isclose(actual_f, expected_f, rtol=rtol, atol=atol, equal_nan=True)
    finite = torch.isfinite(actual_f) & torch.isfinite(expected_f)
    err = (actual_f - expected_f).abs()
    max_err = float(err[finite].max()) if bool(finite.any()) else 0.0
    if bool(close.all()):
        return Comparison(True, max_abs_err=max_err)
    wrong = ~close
    shown = tuple(_element(p, actual_f, expected_f) for p in _positions(wrong))
    return Comparison.failed(Mismatch(name, int(wrong.sum()), total, max_err, atol, rtol, shown, reduced,
                                   on_gpu and _stray_loads(actual_f),
                                   row_zero_only=_row_zero_only(wrong, err, expected_f)),
                          max_abs_err=max_err)


STRIDE_MISS = 0.05  # of the output's largest expected magnitude: a row read from elsewhere is off by that much


def _row_zero_only(wrong: torch.Tensor, err: torch.Tensor, expected: torch.Tensor) -> bool:
    """Row 0 (index 0 of the first axis) all right and every later row wrong somewhere, over 3
    rows or more, each by a share of the output's magnitude: the signature of a wrong row stride,
    whose later rows read other data. Rows off by rounding (a variance that cancels where every
    row's mean is large, row 0 under the tolerance by chance) are not that."""
    if wrong.dim() == 0 or wrong.shape[0] < 3:
        return False
    rows = wrong.reshape(wrong.shape[0], -1).any(dim=1)
    if bool(rows[0]) or not bool(rows[1:].all()):
        return False
    scale = float(expected[torch.isfinite(expected)].abs().max()) if bool(torch.isfinite(expected).any()) else 0.0
    missed = torch.nan_to_num(err, nan=float("inf")).reshape(err.shape[0], -1).max(dim=1).values
    return bool((missed[1:] >= STRIDE_MISS * scale).all())


def _element(flat: int, actual: torch.Tensor, expected: torch.Tensor) -> Element:
    return Element(index_of(flat, actual.shape), actual.reshape(-1)[flat].item(), expected.reshape(-1)[flat].item())


def _stray_loads(actual: torch.Tensor) -> bool:
    """On a GPU, loads past a tensor read the guards' huge values: whether they show."""
    return bool((~torch.isfinite(actual) | (actual.abs() > 1e37)).any())


def order_changed(tensor: str, in_order: torch.Tensor, reversed_order: torch.Tensor) -> OrderDependent:
    """What running the programs in reverse order changed in an output: a race."""
    differ = ~((in_order == reversed_order) | (torch.isnan(in_order) & torch.isnan(reversed_order))) \
        if in_order.is_floating_point() else in_order != reversed_order
    positions = torch.nonzero(differ.reshape(-1)).flatten()[:SHOW].tolist()
    shown = tuple((index_of(p, tuple(in_order.shape)), in_order.reshape(-1)[p].item(),
                   reversed_order.reshape(-1)[p].item()) for p in positions)
    return OrderDependent(tensor, int(differ.sum()), shown)


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
