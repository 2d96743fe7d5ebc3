"""The one way the judge asks a worker and reads its reply: a reply (the request's, or the
worker's ``wire.Failure``) or :class:`Unanswered`. The life cycle, the case runners, ``--bench``
and ``--perf`` all ask through it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from grader.channel import wire
from grader.channel.worker_errors import WorkerDied, WorkerTimedOut
from grader.judge.failures import Crash, FailureKind, Timeout, Unfinished, stops, word

if TYPE_CHECKING:
    from grader.channel.worker_pool import WorkerProcess


class Unanswered(Exception):
    """A request the worker gave no reply to judge: it timed out, died, or sent what its
    request does not allow. ``facts`` are the learner's failure (``kind`` and ``text`` from
    them); ``cause`` names what happened; the remaining cases are not run (``abort`` says why)."""

    def __init__(self, facts: "Timeout | Crash", cause: str, seconds: float = 0.0) -> None:
        text = word(facts)
        super().__init__(text)
        self.facts, self.kind, self.text, self.cause, self.seconds = facts, facts.kind, text, cause, seconds
        self.abort = stops(facts.kind)


def ask(worker: WorkerProcess, message: wire.Request, blobs, timeout: float, device: str):
    """Send ``message``; returns its reply (``message.REPLY`` or a ``wire.Failure``) and blobs.
    A timeout, a dead worker and a malformed reply raise :class:`Unanswered`."""
    try:
        return worker.request(message, blobs, timeout=timeout)
    except WorkerTimedOut as timed:
        raise Unanswered(Timeout(timeout, wall=timed.wall), "WorkerTimedOut",
                         seconds=timed.wall or timeout) from None
    except WorkerDied as died:
        raise died_so(died, device) from None


def died_so(died: WorkerDied, device: str) -> Unanswered:
    return Unanswered(Crash(died.returncode, died.stderr_tail, device, died.corrupted), "WorkerDied")


def malformed(worker: WorkerProcess, error: Exception, device: str) -> None:
    """A reply that passed the wire's checks but does not fit its request (too few blobs,
    bytes of the wrong size): the worker's failure, as any malformed reply."""
    try:
        worker.malformed(error)
    except WorkerDied as died:
        raise died_so(died, device) from None


def unfinished(what: str, exc: WorkerDied | WorkerTimedOut) -> Unfinished:
    """Why a worker gave ``what`` no answer, as the catalogue's facts."""
    if isinstance(exc, WorkerTimedOut):
        return Unfinished(FailureKind.TIMEOUT, what, limit=str(exc))
    return Unfinished(FailureKind.CRASH, what, None if exc.corrupted else exc.returncode, exc.stderr_tail)
