"""What the grader and its worker say to each other: one typed message per operation.

:mod:`grader.channel.protocol` moves JSON headers and byte blobs; this module says what a header may
hold. Each request (``Load``, ``Run``, ``Compile``, ``Record``, ``Replay``, ``Bench``, ``Exit``)
and each reply (``Loaded``, ``Ran``, ``Compiled``, ``Recorded``, ``Replayed``, ``Benched``, or
a ``Failure``) is a frozen dataclass whose fields are checked when it is built, so the side
that sends cannot send what the other side would not accept, and checked again when it is
read: a field that is unknown, missing or of the wrong type is a :class:`WireError`.

Both sides import this module, and it imports nothing of the grader's: the worker runs
learner code, so the grader treats every reply as hostile data, and a reply that is not
what its request allows is the worker's failure, never the grader's.
"""
from __future__ import annotations

import dataclasses
import reprlib
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Union

JSON = Any  # checked only for being what json.loads gives


class WireError(ValueError):
    """A message that is not what its operation allows."""


# ---- checking ------------------------------------------------------------------------------
def _wire_name(f: dataclasses.Field) -> str:
    return f.metadata.get("wire", f.name)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _check(hint, value, where: str):
    """``value`` as ``hint`` allows it (lists become tuples, ints become floats where a float
    is asked for), or a WireError that says where it went wrong."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if hint is type(None):
        if value is None:
            return None
    elif hint is bool:
        if type(value) is bool:
            return value
    elif hint is str:
        if isinstance(value, str):  # torch.__version__ is a str of its own class
            return str(value)
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return int(value)
    elif hint is float:
        if type(value) in (int, float):
            return float(value)
    elif origin is Literal:
        if any(type(value) is type(a) and value == a for a in typing.get_args(hint)):
            return value
    elif origin in (Union, types.UnionType):
        inner = None  # what was wrong inside an object, said rather than "expected X | None"
        for option in typing.get_args(hint):
            try:
                return _check(option, value, where)
            except WireError as exc:
                if isinstance(value, dict) and isinstance(option, type) and issubclass(option, Message):
                    inner = exc
        if inner is not None:
            raise inner
    elif origin is tuple:
        item = typing.get_args(hint)[0]
        if isinstance(value, (list, tuple)):
            return tuple(_check(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    elif origin is dict:
        key, item = typing.get_args(hint)
        if isinstance(value, dict):
            return {_check(key, k, f"{where} key"): _check(item, v, f"{where}[{k!r}]") for k, v in value.items()}
    elif isinstance(hint, type) and issubclass(hint, Message):
        if isinstance(value, hint):
            return value
        if isinstance(value, dict):
            return hint.from_json(value, where)
    else:
        raise TypeError(f"{where}: the wire has no rule for {hint!r}")  # a bug in this module
    raise WireError(f"{where}: expected {_name(hint)}, got {reprlib.repr(value)}")


def _name(hint) -> str:
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "").replace("grader.channel.wire.", "")


def _plain(value):
    """JSON-ready: messages become dicts, tuples lists."""
    if isinstance(value, Message):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Message:
    """A frozen dataclass whose fields are checked against their annotations when built."""

    def __post_init__(self) -> None:
        hints = _hints(type(self))
        for f in dataclasses.fields(self):
            value = _check(hints[f.name], getattr(self, f.name), f"{type(self).__name__}.{_wire_name(f)}")
            object.__setattr__(self, f.name, value)
        self._validate()

    def _validate(self) -> None:
        """Rules across fields; raise WireError."""

    def to_json(self) -> dict:
        return {_wire_name(f): _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_json(cls, data, where: str | None = None):
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise WireError(f"{where}: expected an object, got {type(data).__name__}")
        fields = {_wire_name(f): f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields), key=str)
        if unknown:
            raise WireError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}")
        missing = [name for name, f in fields.items() if name not in data and
                   f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        if missing:
            raise WireError(f"{where}: missing field(s) {', '.join(map(repr, missing))}")
        hints = _hints(cls)
        values = {f.name: _check(hints[f.name], data[name], f"{where}.{name}")
                  for name, f in fields.items() if name in data}
        try:
            return cls(**values)
        except WireError:
            raise
        except (TypeError, ValueError) as exc:
            raise WireError(f"{where}: {exc}") from None


Number = Union[bool, int, float]  # in this order: True stays a bool, 3 an int
Value = Union[bool, int, float, tuple[int, ...]]  # a size may be several dims: batch=(4, 50)
DEVICES = Literal["cpu", "cuda", "compile"]


# ---- requests: the grader to the worker ----------------------------------------------------
@dataclass(frozen=True)
class Request(Message):
    OP: ClassVar[str] = ""
    REPLY: ClassVar[type] = type(None)

    def to_json(self) -> dict:
        return {"op": self.OP, **super().to_json()}


@dataclass(frozen=True)
class BufferSpec(Message):
    """Where one tensor lives in its fenced byte blob (see :class:`grader.judge.fence.Buffer`)."""

    name: str
    role: Literal["input", "output"]
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    guard: int
    nbytes: int
    total: int
    param: str = ""  # the kernel parameter it is passed as ("" for an autograd function)

    def _validate(self) -> None:
        if min(self.guard, self.nbytes) < 0 or self.guard * 2 + self.nbytes > self.total:
            raise WireError(f"BufferSpec {self.name!r}: guard {self.guard} and {self.nbytes} bytes exceed "
                            f"{self.total}")


# ---- replies: the worker to the grader -----------------------------------------------------
@dataclass(frozen=True)
class Reply(Message):
    """What an operation sends back when it did its work; see :func:`envelope`."""


@dataclass(frozen=True)
class OutOfBoundsAccess(Message):
    """The first access outside every tensor (interpreter only)."""

    op: str
    tensor: str
    shape: tuple[int, ...]
    numel: int
    first_index: int
    bad_lanes: int
    lanes: int
    program: tuple[int, ...]
    line: int | None = None
    source: str = ""
    via: Literal["block_ptr", "descriptor"] | None = None


@dataclass(frozen=True)
class Failure(Message):
    """An operation that could not do its work, as the worker saw it; the grader words it.

    ``kind``: ``not_found`` (no such name: ``defined`` lists the kernels there are),
    ``signature`` (not a kernel, or not an autograd.Function: ``reason``), ``exception``,
    ``compile`` (``config``: the autotuning config that failed), ``interpreter_limit`` (the
    interpreter cannot run what compiles: ``error`` names it), ``out_of_bounds``
    (``access``), ``crash`` (the worker cannot go on, ``fatal``), or ``error`` (the worker
    itself broke: a grader bug).
    """

    kind: Literal["not_found", "signature", "exception", "compile", "out_of_bounds", "crash", "error",
                  "interpreter_limit"]
    error: str = ""
    line: int | None = None
    source: str = ""
    defined: tuple[str, ...] = ()
    reason: str = ""
    access: OutOfBoundsAccess | None = None
    config: str = ""
    fatal: bool = False

    def _validate(self) -> None:
        if (self.kind == "out_of_bounds") != (self.access is not None):
            raise WireError("Failure: an access comes with kind 'out_of_bounds', and only with it")


def envelope(reply: "Reply | Failure") -> dict:
    """A reply's header: ``ok`` says which of the two it is (inside a reply, a failure has no ``ok``)."""
    if not isinstance(reply, (Reply, Failure)):
        raise TypeError(f"not a reply: {type(reply).__name__}")
    return {"ok": isinstance(reply, Reply), **reply.to_json()}


def parse_reply(expected: type[Reply], header) -> "Reply | Failure":
    """The reply of the request whose reply type is ``expected``: that reply or a Failure.
    Anything else is a WireError."""
    if not isinstance(header, dict):
        raise WireError(f"a reply must be an object, got {type(header).__name__}")
    body = {k: v for k, v in header.items() if k not in ("ok", "blobs")}
    ok = header.get("ok")
    if ok is True:
        return expected.from_json(body)
    if ok is False:
        return Failure.from_json(body)
    raise WireError(f"{expected.__name__}: 'ok' must be true or false, got {ok!r}")


@dataclass(frozen=True)
class Ready(Message):
    """The worker's greeting, once it has imported torch and triton."""

    device: DEVICES

    def to_json(self) -> dict:
        return {"op": "ready", **super().to_json()}

    @classmethod
    def parse(cls, header) -> "Ready":
        if not isinstance(header, dict) or header.get("op") != "ready":
            raise WireError(f"unexpected greeting {str(header)[:200]}")
        return cls.from_json({k: v for k, v in header.items() if k not in ("op", "blobs")})


# load ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelParam(Message):
    name: str
    constexpr: bool


@dataclass(frozen=True)
class Loaded(Reply):
    """The kernel (or autograd.Function) the file defines under the puzzle's name."""

    params: tuple[KernelParam, ...]
    stub: bool
    line: int | None
    provided: tuple[str, ...] = ()  # set by an autotuner's configs or heuristics, never passed
    defaults: dict[str, Number] = field(default_factory=dict)
    configs: tuple[str, ...] = ()
    heuristics: tuple[str, ...] = ()


@dataclass(frozen=True)
class Load(Request):
    OP: ClassVar[str] = "load"
    REPLY: ClassVar[type] = Loaded
    file: str
    kernel: str


# run ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Overlap(Message):
    """Two programs stored different values to one element."""

    tensor: str
    shape: tuple[int, ...]
    index: int
    programs: tuple[tuple[int, ...], ...]
    line: int | None = None
    source: str = ""

    def _validate(self) -> None:
        if len(self.programs) != 2:
            raise WireError(f"Overlap: two programs, not {len(self.programs)}")


@dataclass(frozen=True)
class EarlyRead(Message):
    """An output loaded before any program stored to it."""

    tensor: str
    index: int
    program: tuple[int, ...]
    shape: tuple[int, ...]
    line: int | None = None
    source: str = ""


@dataclass(frozen=True)
class TraceRecord(Message):
    program: tuple[int, ...]
    tensor: str
    op: Literal["load", "store"]
    kind: Literal["ok", "oob", "masked"]
    numel: int
    indices: tuple[int, ...]


@dataclass(frozen=True)
class Trace(Message):
    """Every access of one run, for the memory-access pictures."""

    records: tuple[TraceRecord, ...]
    truncated: bool


@dataclass(frozen=True)
class KernelRun(Message):
    """One run of a case: under one autotuning config, or with the programs in reverse order."""

    label: str
    reversed: bool
    seconds: float
    printed: str
    failure: Failure | None = None
    overlaps: tuple[Overlap, ...] = ()
    early_reads: tuple[EarlyRead, ...] = ()
    trace: Trace | None = None
    heuristics: dict[str, Union[bool, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Ran(Reply):
    """The runs of one case, in order; each run that did not fail sent its buffers' bytes back."""

    runs: tuple[KernelRun, ...]

    def _validate(self) -> None:
        if not self.runs:
            raise WireError("Ran: no runs")

    @property
    def head(self) -> KernelRun:
        """The run the case's verdict is about: the first that failed, else the first."""
        return next((r for r in self.runs if r.failure is not None), self.runs[0])

    def blobs_expected(self, buffers: int) -> int:
        return buffers * sum(r.failure is None for r in self.runs)


@dataclass(frozen=True)
class Run(Request):
    OP: ClassVar[str] = "run"
    REPLY: ClassVar[type] = Ran
    file: str
    kernel: str
    puzzle_file: str
    values: dict[str, Value]
    named: dict[str, Number]
    buffers: tuple[BufferSpec, ...]
    check_bounds: bool = True
    trace: bool = False
    allocator: bool = False
    reorder: bool = True


# compile ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Compiled(Reply):
    variants: int


@dataclass(frozen=True)
class Compile(Request):
    OP: ClassVar[str] = "compile"
    REPLY: ClassVar[type] = Compiled
    file: str
    kernel: str
    signature: dict[str, str]
    constexprs: dict[str, JSON]
    values: dict[str, Value]
    arch: int = 90
    # A kernel an autograd wrapper launched: its path from the file's module, and the launch's
    # arguments (a tensor as {"pointer": dtype}), which the worker binds to the kernel's parameters.
    path: tuple[str, ...] = ()
    hops: int = 0
    arguments: tuple[JSON, ...] = ()
    keywords: dict[str, JSON] = field(default_factory=dict)
    stage: Literal["ttir", "ttgir", "llir", "ptx", "cubin"] = "cubin"  # the last of Triton's stages to run


# function: record, then replay -------------------------------------------------------------
@dataclass(frozen=True)
class TensorInfo(Message):
    """A value the wrapper returned: a tensor's shape and dtype, or the type of what it is instead."""

    tensor: bool
    type: str = ""
    shape: tuple[int, ...] = ()
    dtype: str = ""


@dataclass(frozen=True)
class TensorMeta(Message):
    """A tensor of a recorded program: its layout, and which storage it views (same number,
    same memory)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str
    offset: int
    storage: int

    def _validate(self) -> None:
        if len(self.shape) != len(self.strides) or min((*self.shape, self.offset, self.storage), default=0) < 0:
            raise WireError(f"TensorMeta: shape {self.shape}, strides {self.strides}, offset {self.offset}")


@dataclass(frozen=True)
class KernelPath(Message):
    """A kernel as found from the learner's module: attribute names (through imported modules
    and classes), then how many ``.fn`` to follow (a jit function under an autotuner)."""

    path: tuple[str, ...]
    hops: int = 0

    def _validate(self) -> None:
        if not self.path or not 0 <= self.hops <= 8:
            raise WireError(f"KernelPath: {self.path} and {self.hops} hops")


@dataclass(frozen=True)
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
    options: dict[str, JSON] = field(default_factory=dict)  # that warmup's constexprs and options

    def _validate(self) -> None:
        if bool(self.op) == (self.kernel is not None):
            raise WireError("Step: an operator or a launch, one of the two")
        if self.kernel is not None and (not self.grids or any(not 1 <= len(g) <= 3 or min(g) < 1 for g in self.grids)):
            raise WireError(f"Step: a launch needs a grid of 1 to 3 positive ints per config, not {self.grids}")


@dataclass(frozen=True)
class Returned(Message):
    """What forward or backward returned in one place: a tensor's ref, or the type of what it was."""

    ref: int | None = None
    type: str = ""


@dataclass(frozen=True)
class Unseen(Message):
    """A tensor the wrapper passed on that no recorded step made."""

    phase: Literal["forward", "backward"]
    what: str
    shape: tuple[int, ...]
    file: str = ""
    line: int | None = None
    source: str = ""


@dataclass(frozen=True)
class HostRead(Message):
    """The wrapper asked for a tensor's values, which a recording does not have, or
    (``escaped``) computed below the recording, with PyTorch's dispatch turned off."""

    phase: Literal["forward", "backward"]
    op: str
    file: str = ""
    line: int | None = None
    source: str = ""
    escaped: bool = False


@dataclass(frozen=True)
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

    def _validate(self) -> None:
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


@dataclass(frozen=True)
class Recorded(Reply):
    """The wrapper recorded as a program, or how recording it failed (``host``: it asked for values)."""

    seconds: float
    printed: str
    program: Program | None = None
    failure: Failure | None = None
    host: HostRead | None = None
    phase: Literal["forward", "backward"] = "forward"  # where it failed

    def _validate(self) -> None:
        if (self.failure is None) == (self.program is None):
            raise WireError("Recorded: a program or a failure, one of the two")


@dataclass(frozen=True)
class Record(Request):
    """Run the wrapper's forward and backward on tensors without values, and write down what it does."""

    OP: ClassVar[str] = "record"
    REPLY: ClassVar[type] = Recorded
    file: str
    kernel: str
    buffers: tuple[BufferSpec, ...]  # the inputs, then grad_output: their layouts only


@dataclass(frozen=True)
class Replayed(Reply):
    """A program replayed on the grader's inputs: the output and the gradients (the blobs are
    the tensors among them), or how the replay failed."""

    seconds: float
    printed: str
    returned: tuple[TensorInfo, ...] = ()
    failure: Failure | None = None
    label: str = ""  # the autotuning configs this replay used
    disagrees: str = ""  # where the replay made a tensor other than the recording said

    def blobs_expected(self) -> int:
        return sum(r.tensor for r in self.returned)


@dataclass(frozen=True)
class Replay(Request):
    """Replay a recorded program on real data: its operators and its kernels, nothing else."""

    OP: ClassVar[str] = "replay"
    REPLY: ClassVar[type] = Replayed
    file: str
    program: Program
    buffers: tuple[BufferSpec, ...]  # the inputs, then grad_output, fenced
    config: int = 0  # the autotuning config of each autotuned launch (its last, past its count)
    check_bounds: bool = True
    allocator: bool = False


# bench --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorShape(Message):
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class NamedTensor(TensorShape):
    name: str = ""


@dataclass(frozen=True)
class CopyBandwidth(Message):
    gb_per_s: float
    cached: bool
    bytes: int = 0
    ms: float = 0.0
    statistic: str = ""


@dataclass(frozen=True)
class BenchTiming(Message):
    """One size of the sweep: the timings, and what each returned tensor is (its bytes are the blobs)."""

    sizes: dict[str, JSON]
    blocks: dict[str, Number]
    outputs: tuple[TensorShape, ...]
    copy_ms: float
    ms: float
    baseline_ms: float
    ms_rounds: tuple[float, ...] = ()
    baseline_ms_rounds: tuple[float, ...] = ()
    compiled_ms: float | None = None
    compiled_ms_rounds: tuple[float, ...] = ()
    gpu_ms: float | None = None
    baseline_gpu_ms: float | None = None
    gpu_note: str = ""

    def _validate(self) -> None:
        if not (self.ms > 0 and self.baseline_ms > 0):
            raise WireError(f"BenchTiming: times must be positive, got {self.ms} and {self.baseline_ms}")

    def to_json(self) -> dict:  # absent, not null, where a puzzle has no such figure
        return {k: v for k, v in super().to_json().items()
                if not (k in ("compiled_ms", "gpu_ms", "baseline_gpu_ms") and v is None)
                and not (k in ("compiled_ms_rounds", "gpu_note") and not v)}


@dataclass(frozen=True)
class Benched(Reply):
    device: str
    copy: CopyBandwidth
    result: BenchTiming
    statistic: str
    versions: dict[str, str]

    def _validate(self) -> None:
        if not self.copy.gb_per_s > 0:
            raise WireError(f"Benched: copy bandwidth must be positive, got {self.copy.gb_per_s}")


@dataclass(frozen=True)
class Bench(Request):
    """Time the learner's kernel (or autograd function) at one size, on the inputs the grader planned."""

    OP: ClassVar[str] = "bench"
    REPLY: ClassVar[type] = Benched
    puzzle_file: str
    file: str
    graphs: bool
    sizes: dict[str, JSON]
    traffic: int
    inputs: tuple[TensorShape, ...]
    values: dict[str, Value]
    outputs: tuple[NamedTensor, ...] = ()
    grid: tuple[int, ...] = ()


@dataclass(frozen=True)
class Exit(Request):
    OP: ClassVar[str] = "exit"


REQUESTS: dict[str, type[Request]] = {cls.OP: cls for cls in (Load, Run, Compile, Record, Replay, Bench, Exit)}


def parse_request(header) -> Request:
    """A request as the worker reads it; anything else is a WireError."""
    if not isinstance(header, dict):
        raise WireError(f"a request must be an object, got {type(header).__name__}")
    op = header.get("op")
    cls = REQUESTS.get(op) if isinstance(op, str) else None
    if cls is None:
        raise WireError(f"unknown operation {op!r}")
    return cls.from_json({k: v for k, v in header.items() if k not in ("op", "blobs")})
