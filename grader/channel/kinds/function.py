"""The messages only an autograd puzzle sends: its wrapper recorded on tensors without values
(``Record`` -> ``Recorded``, a :class:`Program`), then replayed on the grader's inputs (``Replay``
-> ``Replayed``). Declared as the core's messages are (:mod:`grader.channel.wire`), and registered
into the requests the worker reads.
"""
from __future__ import annotations

import enum
from typing import ClassVar, Literal, Union

from grader.channel.wire_format import (
    JSON,
    BufferSpec,
    Failure,
    Launched,
    Message,
    Reply,
    Request,
    TensorInfo,
    WireError,
    register_requests,
)


class FunctionWarmStep(enum.StrEnum):
    """The kind's warm-up steps, taken once in the zygote (grader.sandbox.warmup), by the names the
    zygote is asked for them."""

    FAKE_TENSORS = "fake_tensors"  # fake tensors' imports and first dispatch, which a recording pays


class TensorMeta(Message):
    """A tensor of a recorded program: its layout, and which storage it views (same number,
    same memory)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str
    offset: int
    storage: int

    def __post_init__(self) -> None:
        if len(self.shape) != len(self.strides) or min((*self.shape, self.offset, self.storage), default=0) < 0:
            raise WireError(f"TensorMeta: shape {self.shape}, strides {self.strides}, offset {self.offset}")


class KernelPath(Message):
    """A kernel as found from the learner's module: attribute names (through imported modules
    and classes), then how many ``.fn`` to follow (a jit function under an autotuner)."""

    path: tuple[str, ...]
    hops: int = 0

    def __post_init__(self) -> None:
        if not self.path or not 0 <= self.hops <= 8:
            raise WireError(f"KernelPath: {self.path} and {self.hops} hops")


class Step(Message):
    """One thing a wrapper did: a PyTorch operator (``op``, e.g. ``aten::view.default``, and the
    refs of the tensors it made) or a Triton launch (``kernel``, and its grid per autotuning
    config). Arguments are JSON: a tensor is ``{"ref": N}``."""

    phase: Literal["forward", "backward"]
    args: tuple[JSON, ...]
    kwargs: dict[str, JSON]
    file: str = ""
    line: int | None = None
    source: str = ""
    op: str = ""
    out: tuple[int, ...] = ()
    kernel: KernelPath | None = None
    grids: tuple[tuple[int, ...], ...] = ()
    compiled: bool = False  # launched through the handle kernel.warmup(...) returned
    options: dict[str, JSON] = {}  # that warmup's constexprs and options

    def __post_init__(self) -> None:
        if bool(self.op) == (self.kernel is not None):
            raise WireError("Step: an operator or a launch, one of the two")
        if self.kernel is not None and (not self.grids or any(not 1 <= len(g) <= 3 or min(g) < 1 for g in self.grids)):
            raise WireError(f"Step: a launch needs a grid of 1 to 3 positive ints per config, not {self.grids}")


class Returned(Message):
    """What forward or backward returned in one place: a tensor's ref, or the type of what it was."""

    ref: int | None = None
    type: str = ""


class Unseen(Message):
    """A tensor the wrapper passed on that no recorded step made."""

    phase: Literal["forward", "backward"]
    what: str
    shape: tuple[int, ...]
    file: str = ""
    line: int | None = None
    source: str = ""


class HostRead(Message):
    """The wrapper asked for a tensor's values, which a recording does not have, or
    (``escaped``) computed below the recording, with PyTorch's dispatch turned off."""

    phase: Literal["forward", "backward"]
    op: str
    file: str = ""
    line: int | None = None
    source: str = ""
    escaped: bool = False


class Program(Message):
    """A wrapper's forward and backward as recorded: refs ``0 .. inputs-1`` are the forward's
    inputs, ref ``inputs`` is ``grad_output``; ``metas`` has every ref's layout."""

    inputs: int
    metas: tuple[TensorMeta, ...]
    steps: tuple[Step, ...]
    output: Returned
    grads: tuple[Returned, ...]
    saved: tuple[Union[int, None], ...]
    attributes: tuple[str, ...] = ()  # ctx attributes that hold a tensor
    unseen: Unseen | None = None

    def __post_init__(self) -> None:
        refs = len(self.metas)
        made = [r for s in self.steps for r in s.out]
        returned = [r.ref for r in (self.output, *self.grads) if r.ref is not None]
        if self.inputs < 0 or refs <= self.inputs or any(not 0 <= r < refs for r in (*made, *returned)) \
                or any(r is not None and not 0 <= r < refs for r in self.saved):
            raise WireError(f"Program: a ref outside the {refs} the program has")

    def launches(self):
        return [s for s in self.steps if s.kernel is not None]

    def replays(self) -> int:
        """Runs needed to grade every autotuning config: the most configs any launch has."""
        return max((len(s.grids) for s in self.launches()), default=1)


class Recorded(Reply):
    """The wrapper recorded as a program, or how recording it failed (``host``: it asked for values)."""

    seconds: float
    printed: str
    program: Program | None = None
    failure: Failure | None = None
    host: HostRead | None = None
    phase: Literal["forward", "backward"] = "forward"  # where it failed

    def __post_init__(self) -> None:
        if (self.failure is None) == (self.program is None):
            raise WireError("Recorded: a program or a failure, one of the two")


class Record(Request):
    """Run the wrapper's forward and backward on tensors without values, and write down what it does."""

    REPLY: ClassVar[type] = Recorded
    file: str
    kernel: str
    buffers: tuple[BufferSpec, ...]  # the inputs, then grad_output: their layouts only


class Replayed(Reply):
    """A program replayed on the grader's inputs: the output and the gradients (the blobs are
    the tensors among them), or how the replay failed."""

    seconds: float
    printed: str
    returned: tuple[TensorInfo, ...] = ()
    failure: Failure | None = None
    label: str = ""  # the autotuning configs this replay used
    disagrees: str = ""  # where the replay made a tensor other than the recording said
    launches: tuple[Launched, ...] = ()  # in the interpreter: how each launch ran

    def blobs_expected(self) -> int:
        return sum(r.tensor for r in self.returned)


class Replay(Request):
    """Replay a recorded program on real data: its operators and its kernels, nothing else."""

    REPLY: ClassVar[type] = Replayed
    file: str
    program: Program
    buffers: tuple[BufferSpec, ...]  # the inputs, then grad_output, fenced
    config: int = 0  # the autotuning config of each autotuned launch (its last, past its count)
    check_bounds: bool = True
    allocator: bool = False
    serial: bool = False  # in the interpreter: one program after another, never batched (a check of the engine)


register_requests(Record, Replay)
