"""What a kernel's wrong values say, beyond the comparison's own words (a read before the write, a
known mistake, a strided input's gaps), and what its runs show of a race: the kernel runner's
words (:mod:`grader.judge.kinds.kernel.run`), read from the outputs it got back.
"""
from __future__ import annotations

from grader.course.puzzle import Case, Puzzle
from grader.judge import failures
from grader.judge.compare import look_alike_note, order_changed, recognise, written_outputs
from grader.judge.failures import FailureKind
from grader.judge.fence import unpack
from grader.judge.plan import CasePlan, row_gaps_look_alike


def wrong(puzzle: Puzzle, case: Case, plan: CasePlan, got, run, outcome) -> tuple[FailureKind, str]:
    """What wrong values say: read before they were written, a known mistake, a strided input's gaps."""
    early = [r for r in run.early_reads if r.tensor in outcome.message
             and r.tensor not in puzzle.zeroed]  # a zeroed output may be read at once
    text = outcome.message
    if early and outcome.kind in (FailureKind.UNWRITTEN, FailureKind.NONFINITE, FailureKind.MISMATCH):
        read = early[0]
        text = failures.word(failures.ReadEarly(outcome.kind, read.tensor, read.program, read.index,
                                                read.shape, read.line, read.source))
    kind = outcome.kind
    if outcome.kind in (FailureKind.MISMATCH, FailureKind.NONFINITE) and text == outcome.message:
        text = look_alike(puzzle, case, plan, got, outcome)
    gaps = gap_fill(puzzle, case, plan, got, outcome) if text == outcome.message else None
    if gaps is not None:
        kind, text = gaps.kind, failures.word(gaps)
    return kind, text


def look_alike(puzzle: Puzzle, case: Case, plan: CasePlan, got, outcome) -> str:
    """The outcome's message, with "It looks like <name>: <where>." when the wrong values are
    those of a known mistake. A NaN the mistake explains needs no general advice on NaN: the
    note replaces it."""
    message = outcome.message
    # Another student's value of a constant first: a file written for them is the likelier story.
    looks = puzzle.variant_look_alikes() + tuple(puzzle.look_alikes)
    if not looks:
        return message
    actual = written_outputs(plan.buffers, got, len(plan.inputs), puzzle.host_reduce)
    # The loosest of the outputs' tolerances: a look-alike is a hint, not a verdict.
    atol, rtol = map(max, zip(*(puzzle.tolerance(b.dtype) for b in plan.output_buffers)))
    look = recognise(looks, plan.inputs, plan.expected, actual, atol, rtol,
                     {**puzzle.variant_values, **puzzle.sizes(case), **case.blocks}, case.layouts)
    return message if look is None else look_alike_note(outcome.finding or message, look)


def gap_fill(puzzle: Puzzle, case: Case, plan: CasePlan, got, outcome) -> failures.LooksLike | None:
    """Elements "never written" that a kernel reading between a strided input's rows wrote: they
    hold the fill the gaps hold. Then the values are wrong, and the look-alike says where."""
    if outcome.kind != FailureKind.UNWRITTEN or not isinstance(outcome.facts, failures.Unwritten):
        return None
    look = row_gaps_look_alike(puzzle, case, kernel=True)
    if look is None:
        return None
    actual = written_outputs(plan.buffers, got, len(plan.inputs), puzzle.host_reduce)
    atol, rtol = map(max, zip(*(puzzle.tolerance(b.dtype) for b in plan.output_buffers)))
    if recognise((look,), plan.inputs, plan.expected, actual, atol, rtol,
                 {**puzzle.variant_values, **puzzle.sizes(case), **case.blocks}, case.layouts) is None:
        return None
    f = outcome.facts
    return failures.LooksLike(FailureKind.MISMATCH, failures.GapFill(f.name, f.count, f.total, f.first), look)


def race(plan: CasePlan, runs, results) -> failures.Overlap | failures.OrderDependent | failures.ReadAcross | None:
    """Two programs storing different values to one element, a result that changes when the
    programs run in the other order, or a program loading what another stores (where no atomic
    could order them): on a GPU the outcome depends on timing."""
    for run in runs:
        if run.overlaps:
            overlap = run.overlaps[0]
            return failures.Overlap(overlap.tensor, overlap.programs, overlap.index, overlap.shape, overlap.line,
                                    overlap.source)
    reversed_runs = [(r, got) for r, got in zip(runs, results) if r.reversed]
    if reversed_runs:
        run, got = reversed_runs[0]
        for buffer, a, b in list(zip(plan.buffers, results[0], got))[len(plan.inputs):]:
            if a != b:
                before, after = unpack(buffer, a)[0], unpack(buffer, b)[0]
                return order_changed(buffer.name, before, after)
    crossing = next((run.crossings[0] for run in runs if run.crossings and not run.atomics), None)
    if crossing is None:
        return None
    return failures.ReadAcross(crossing.tensor, tuple(crossing.program), tuple(crossing.other), crossing.index,
                               tuple(crossing.shape), crossing.loaded, crossing.line, crossing.source)
