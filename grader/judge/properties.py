"""Grading a case by properties (``Puzzle.check``), where more than one output is right.

A dropout's mask is its random generator's choice: the spec draws one stream, the Triton
tutorial another, and both are right. So the case's output is compared with what the run should
have written given the choices it made (``Check.expect``), elementwise, as a spec's output is;
then the case runs again with other values (``Check.reruns``: on the same inputs, or on others
drawn afresh where a rerun names :data:`INPUTS`), and the runs together are judged (``Check.judge``:
grader/judge/randomness.py has the binomial tests puzzle 27's judge is built from). A look-alike
of the spec still names a failure; a look-alike of a correct alternative (``Check.notes``) is
said beside a pass, never as a fail.

The reruns go through the grader (:meth:`grader.judge.kinds.kernel.run.KernelRunner.run_once`); what
is decided here runs in the grader's process, on tensors.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import replace
from typing import Iterator, Mapping, Sequence

import torch

from grader.course.puzzle import Puzzle
from grader.course.puzzle_parts import Check, Run
from grader.judge import failures
from grader.judge.compare import close_enough, made_alike

# A rerun's override of this name draws the case's inputs again, from the case's seed plus its value.
INPUTS = "inputs"


def expected(check: Check, values: Mapping[str, int], inputs: Sequence, outputs: Sequence) -> tuple:
    """What this run should have written, given its own choices; the NaN fill of an element never
    written stays as it is, so that the comparison names it as unwritten."""
    return tuple(check.expect(Run(dict(values), tuple(inputs), tuple(outputs))))


def judged(puzzle: Puzzle, runs: Sequence[Run]) -> "failures.PropertyFailed | None":
    """What the runs show wrong, or None. A judge that raises is a course bug, reported as one."""
    with _one_thread():
        what = puzzle.check.judge(tuple(runs))
    return None if what is None else failures.PropertyFailed(puzzle.outputs[0], what)


_threads = threading.Lock()
_judging = [0, 0]  # judges running now, and the thread count to restore when the last one ends


@contextmanager
def _one_thread() -> Iterator[None]:
    """Torch on one thread while any judge runs: a judge makes hundreds of small operations (puzzle 27's
    battery), each of which waits on the whole pool of threads, and on a loaded machine such a wait can
    take milliseconds (measured: 8 s of a dropout's grading under load, 0.5 s on one thread)."""
    with _threads:
        if not _judging[0]:
            _judging[1] = torch.get_num_threads()
            torch.set_num_threads(1)
        _judging[0] += 1
    try:
        yield
    finally:
        with _threads:
            _judging[0] -= 1
            if not _judging[0]:
                torch.set_num_threads(_judging[1])


def note(check: Check, inputs: Sequence, outputs: Sequence, spec: Sequence, values: Mapping[str, int], layouts,
         atol: float, rtol: float) -> str:
    """The note of the first correct alternative the outputs match ("" if none): a passing case
    that draws another stream than the statement's is told so, and passes. An alternative that
    gives the spec's own output on this case (``spec``) says nothing here."""
    for look in check.notes:
        try:
            made = look.produce(inputs, values, layouts)
        except Exception:  # a course bug must not turn a pass into a grader error
            continue
        if len(made) != len(outputs) or all(close_enough(m, e, atol, rtol) for m, e in zip(made, spec)):
            continue
        if all(made_alike(a, m, atol, rtol) and close_enough(a, m, atol, rtol) for a, m in zip(outputs, made)):
            return said(look)
    return ""


def said(look) -> str:
    """A correct alternative's note, in the words the grade and ``--perf`` both say it."""
    return f"Note: your output looks like {look.name}: {look.where}"


def rerun_case(case, overrides: Mapping[str, int]):
    """The case with some of its sizes and blocks replaced. Its inputs follow the case's seed and
    its tensors' shapes: the same, unless ``overrides[INPUTS]`` moves the seed they are drawn from
    (a dropout's backward runs the forward's kernel on another tensor, grad_output)."""
    sizes = {k: overrides.get(k, v) for k, v in case.sizes.items()}
    blocks = {k: overrides.get(k, v) for k, v in case.blocks.items()}
    return replace(case, sizes=sizes, blocks=blocks, seed=case.seed + overrides.get(INPUTS, 0))
