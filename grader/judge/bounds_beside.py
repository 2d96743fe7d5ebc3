"""The bounds check beside a GPU: each case again in the interpreter, every load and store
checked (a kernel's run, an autograd case's replay). A load out of bounds whose value is never
used passes on a GPU, silently; the values stay the GPU's to judge. So does a program loading what
another program of its launch stores, where no value shows it: the interpreter's write log finds it,
as on the CPU, so that a GPU and a laptop give one verdict.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from grader.channel import wire
from grader.judge import failures, messages
from grader.judge.asking import Unanswered
from grader.judge.failures import FailureKind

if TYPE_CHECKING:
    from grader.judge.case_run import PuzzleState

# How the worker reports the interpreter's refusal of a block's truth (`and` between masks:
# sandbox.interpreter_limits.BlockTruth): the learner's mistake on every device, found beside a GPU too.
BLOCK_TRUTH = "BlockTruth:"


class BoundsBeside:
    """One grading's check beside a GPU. ``dims``: the dims of an access's tensor, for its words."""

    def __init__(self, state: PuzzleState, dims: Callable[[wire.OutOfBoundsAccess], tuple[str, ...]]) -> None:
        self.state, self.dims = state, dims
        self.unchecked: failures.BesideUnchecked | None = None  # why it could not run, once it could not

    def checked(self, message: wire.Request, blobs, case):
        """Here an access out of bounds fails, and so does ``and`` between blocks (refused on the
        CPU too). A run that could not finish, or raised what ran on the GPU, is a check missing:
        the case is neither passed nor failed (BesideUnchecked), never passed in silence.
        The facts found, or None."""
        state = self.state
        if state.bounds is None:
            return None
        if self.unchecked is not None:  # it could not run for an earlier case: not tried again, said again
            return self.unchecked
        try:
            reply, _ = state.ask(message, blobs, worker=state.bounds)
        except Unanswered as unanswered:
            why = f"it did not finish within {unanswered.seconds:g} s" if unanswered.kind == FailureKind.TIMEOUT \
                else f"its worker died ({unanswered.text[:200]})"
            self.unchecked = failures.BesideUnchecked(f"{why} (in case {case.label})")
            return self.unchecked
        # a kernel's runs, or a kind's own reply that is one run (an autograd replay's)
        runs = reply.runs if isinstance(reply, wire.Ran) else [reply] if hasattr(reply, "failure") else []
        failure = next((r.failure for r in runs if r.failure is not None), reply if isinstance(reply, wire.Failure)
                       else None)
        if failure is None:
            crossing = next((r.crossings[0] for r in runs if getattr(r, "crossings", ()) and not r.atomics), None)
            if crossing is None:
                return None
            c = crossing
            across = failures.ReadAcross(c.tensor, tuple(c.program), tuple(c.other), c.index, tuple(c.shape),
                                         c.loaded, c.line, c.source)
            return failures.Worded(across.kind, failures.word(across) + failures.RAISED_BESIDE)
        kind = failures.reported(failure.kind)
        if kind == FailureKind.RACE:  # the batch found programs crossing with nothing to order them
            c = failure.crossing
            across = failures.ReadAcross(c.tensor, tuple(c.program), tuple(c.other), c.index, tuple(c.shape),
                                         c.loaded, c.line, c.source)
            return failures.Worded(kind, failures.word(across) + failures.RAISED_BESIDE)
        if kind == FailureKind.OUT_OF_BOUNDS:
            return failures.Worded(kind, messages.out_of_bounds(failure.access, self.dims(failure.access))
                                   + failures.FOUND_BESIDE)
        if kind == FailureKind.EXCEPTION and failure.error.startswith(BLOCK_TRUTH):  # refused on every device
            raised = failures.Raised(failure.error, failure.line, failure.source)
            return failures.Worded(kind, failures.word(raised) + failures.RAISED_BESIDE)
        if kind == FailureKind.EXCEPTION:  # what compiled and ran on the GPU, and the interpreter does not run
            self.unchecked = failures.BesideUnchecked(f"it raised {failure.error[:300]}", failure.line,
                                                      failure.source)
        elif kind == FailureKind.INTERPRETER_LIMIT:
            self.unchecked = failures.BesideUnchecked(f"it cannot run {failure.error}", failure.line, failure.source)
        else:
            what = failures.label(kind) if kind is not None else "error of the worker's own"
            self.unchecked = failures.BesideUnchecked(f"it ended in a {what} in case {case.label}: "
                                                      f"{(failure.error or failure.reason)[:300]}")
        return self.unchecked
