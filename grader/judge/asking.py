"""The one way the judge asks a worker and reads its reply: a reply (the request's, or the
worker's ``wire.Failure``) or :class:`Unanswered`. Kept below the life cycle and the case runners,
which both ask (tests/test_layout.py caps the import chain that runs through them).
"""
from __future__ import annotations

from typing import Protocol

from grader.channel import wire
from grader.channel.worker_errors import WorkerDied, WorkerTimedOut
# The families of the facts asked for, not the failures' face: asking sits below the case runners
from grader.judge.failures.bench import Unfinished
from grader.judge.failures.catalogue import FailureKind, stops, word
from grader.judge.failures.runs import Crash, Timeout


class Asked(Protocol):
    """What asking needs of a worker (a :class:`grader.channel.worker_pool.WorkerProcess`): named
    here, so that the case runners below the life cycle need not import the process machinery."""

    def request(self, message: wire.Request, blobs: list[bytes] = ..., timeout: float | None = ...): ...

    def malformed(self, error: Exception): ...


class Unanswered(Exception):
    """A request the worker gave no reply to judge: it timed out, died, or sent what its
    request does not allow. ``facts`` are the learner's failure (``kind`` and ``text`` from
    them); ``cause`` names what happened; the remaining cases are not run (``abort`` says why)."""

    def __init__(self, facts: "Timeout | Crash", cause: str, seconds: float = 0.0) -> None:
        text = word(facts)
        super().__init__(text)
        self.facts, self.kind, self.text, self.cause, self.seconds = facts, facts.kind, text, cause, seconds
        self.abort = stops(facts.kind)


def ask(worker: Asked, message: wire.Request, blobs, timeout: float, device: str):
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


def malformed(worker: Asked, error: Exception, device: str) -> None:
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
