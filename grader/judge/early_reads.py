"""A result must not depend on what its outputs held before the kernel wrote them.

The grader hands a kernel its outputs filled with a marker (a NaN of our own: :mod:`.fence`), so
an element never written shows. A kernel may read an output before storing to it, see the
marker, and behave well only then (``old != old``; an ``atomic_add(z, 0.0)`` whose return it
tests): on a GPU an output holds stale memory, and the result is garbage. No reading of the
code finds every such test, so the result is tested instead: where a passing case's programs
read an output element no store of the run had reached yet (the worker watches every run in
the interpreter: :mod:`grader.sandbox.unwritten_reads`), the case runs again with those
outputs holding stale values drawn from the case's seed (``CasePlan.refill``), and every
output must come out the same. A read that does not change the result (read, then
overwritten) passes. Outputs the puzzle starts as zeros (``Puzzle.zeroed``) may be read at once.

The interpreter is deterministic, atomics included (it runs them in program order), so the two
runs must agree bit for bit. A GPU's worker watches nothing: every passing case runs again, and
as its float atomics may add in another order each run, values are compared within the
puzzle's tolerance there (NaN where NaN).
"""
from __future__ import annotations

import msgspec
import torch

from grader.channel import wire
from grader.judge import failures
from grader.judge.asking import Unanswered
from grader.judge.case_run import CaseOutcome, describe_case, failed_case, unanswered_case
from grader.judge.failures import FailureKind
from grader.judge.fence import pack, unpack


def early_reads(reply: wire.Ran, zeroed) -> tuple[wire.EarlyRead, ...] | None:
    """The unwritten reads of the reply's runs that call for a second run (the puzzle's zeroed
    outputs excused); None where a run was not watched (a GPU): any read may have happened."""
    found = []
    for run in reply.runs:
        if run.unwritten_reads is None:
            return None
        found += [r for r in run.unwritten_reads if r.tensor not in zeroed and r.tensor not in
                  {f.tensor for f in found}]
    return tuple(found)


def refilled_blobs(plan, blobs, zeroed) -> list:
    """``blobs`` with every output not zeroed packed again, its elements the plan's stale values."""
    inputs = len(plan.inputs)
    return [blob if i < inputs or buffer.name in zeroed else pack(buffer, None, plan.refill)
            for i, (buffer, blob) in enumerate(zip(plan.buffers, blobs))]


def first_change(plan, before: list, after: list, tolerance=None) -> tuple[int, failures.FillChanged] | None:
    """The first output element that differs between two runs' buffers (lists of each run's blobs,
    in order), bit for bit, or (``tolerance``: dtype name -> (atol, rtol)) beyond it, with the
    index of the run it differs in."""
    inputs = len(plan.inputs)
    for run, (first, second) in enumerate(zip(before, after)):
        for buffer, a, b in list(zip(plan.buffers, first, second))[inputs:]:
            x, y = unpack(buffer, a)[0], unpack(buffer, b)[0]
            differ = _differ(x, y, None if tolerance is None else tolerance(buffer.dtype))
            if bool(differ.any()):
                k = int(torch.nonzero(differ)[0])
                return run, failures.FillChanged(buffer.name, k, tuple(buffer.shape), float(x.reshape(-1)[k]),
                                                 float(y.reshape(-1)[k]))
    return None


def _differ(x: torch.Tensor, y: torch.Tensor, tolerance) -> torch.Tensor:
    """Elementwise, flattened: do ``x`` and ``y`` differ (bit for bit, or beyond ``(atol, rtol)`` for floats)?"""
    x, y = x.reshape(-1), y.reshape(-1)
    if tolerance is not None and x.dtype.is_floating_point:
        atol, rtol = tolerance
        return ~torch.isclose(x.double(), y.double(), rtol=rtol, atol=atol, equal_nan=True)
    width = x.element_size()
    return (x.contiguous().view(torch.uint8).reshape(-1, width) !=
            y.contiguous().view(torch.uint8).reshape(-1, width)).any(-1)


def failure_label(reply) -> str:
    """The label of the run that failed in a reply (an autotuning config's), or ""."""
    return reply.head.label if isinstance(reply, wire.Ran) else ""


def refilled(state, case, plan, message: wire.Run, blobs, reply: wire.Ran, raw, describe: str,
             extra: dict) -> CaseOutcome | None:
    """A passing case's outcome after the second run: None where it needs none or its outputs came
    out the same, else the case failed, naming the read and the change. ``state``: the puzzle's
    grading (its ``puzzle``, ``ask`` and ``malformed``)."""
    puzzle = state.puzzle
    reads = early_reads(reply, puzzle.zeroed)
    if reads == ():
        return None
    on_gpu = reads is None
    again = msgspec.structs.replace(message, reorder=False, trace=False)
    try:
        second, raw_again = state.ask(again, refilled_blobs(plan, blobs, puzzle.zeroed))
    except Unanswered as unanswered:
        return unanswered_case(case, puzzle, describe, unanswered, not on_gpu)
    failure = second if isinstance(second, wire.Failure) else second.head.failure
    n = len(plan.buffers)
    if failure is None and (len(raw_again) != second.blobs_expected(n)
                            or any(len(b) != buffer.total
                                   for b, buffer in zip(raw_again, plan.buffers * len(second.runs)))):
        state.malformed(wire.WireError("a refilled run's buffers came back with other sizes"))
    runs = [run for run in reply.runs if not run.reversed]
    if failure is not None:
        named = reads[0].tensor if reads else next(b.name for b in plan.output_buffers if b.name not in puzzle.zeroed)
        changed, label = failures.FillChanged(named, -1, (), failed=failure.kind), failure_label(second)
    else:
        kept = [raw[i * n:(i + 1) * n] for i, run in enumerate(reply.runs) if not run.reversed]
        runs_again = [raw_again[i * n:(i + 1) * n] for i in range(len(raw_again) // n)]
        found = first_change(plan, kept, runs_again, puzzle.tolerance if on_gpu else None)
        if found is None:
            return None
        index, changed = found
        label = runs[index].label
        reads = early_reads(wire.Ran(runs=(runs[index],)), puzzle.zeroed) or reads  # that run's own, where watched
    # named by the run (an autotuning config) that changed, not the case's first run
    describe = describe_case(case, puzzle) + (f" with {label}" if label else "")
    read = next((r for r in reads or () if r.tensor == changed.tensor), (reads or (None,))[0])
    if read is None:  # a GPU's run: no read seen, only the change
        facts = failures.ReadEarly(FailureKind.MISMATCH, changed.tensor, (), -1, changed.shape, changed=changed)
    else:
        facts = failures.ReadEarly(FailureKind.MISMATCH, read.tensor, tuple(read.program), read.index,
                                   tuple(read.shape), read.line, read.source, changed=changed)
    return CaseOutcome(failed_case(case, puzzle, facts, describe, **extra))
