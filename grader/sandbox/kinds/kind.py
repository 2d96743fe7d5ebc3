"""What a kind of puzzle is, to the worker: the :class:`WorkerKind` each wing of
:mod:`grader.sandbox.kinds` declares (its ``KIND``), and the warm-up steps it adds to its zygote."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from grader.channel import wire
from grader.sandbox.warmup import WarmStep


@dataclass(frozen=True)
class WorkerKind:
    name: str  # as grader.course.kinds names it
    owns: Callable[[object], bool] | None  # whether a learner's object is this kind's; None: what no other kind owns
    load: Callable  # (the worker, the object, its name) -> wire.Loaded, or a wire.Failure that says why not
    ran: Callable[[object], object]  # the object -> the kernel a compile error is read from; None: found from the error
    bench: Callable  # (puzzle, the object, the wire_measure.Bench request, blobs, device) -> (result, blobs)
    profile: Callable  # (puzzle, the object, the wire_measure.Profile request, its file, its module) -> counts (--perf)
    # (the worker's device) -> None: what must be set before the learner's file is first imported
    # (a Load that names the kind); None: nothing
    before_import: Callable[[str], None] | None = None
    # the requests only this kind sends: request type -> (the worker, the request, blobs) -> (reply, blobs)
    answers: dict[type[wire.Request], Callable] = field(default_factory=dict)
    warm: tuple[WarmStep, ...] = ()
