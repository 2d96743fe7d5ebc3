"""The wire's format: what every message is, and how one is written and read.

Every message is a frozen :class:`msgspec.Struct` that refuses unknown fields; a request is
tagged by ``op``, a reply by ``reply``, and any request may be answered by a :class:`Failure`.
The worker reads only the requests registered here (:func:`register_requests`): the core's
(:mod:`grader.channel.wire`), the measurements' (:mod:`grader.channel.wire_measure`) and each
kind's (:mod:`grader.channel.kinds`), each registering its own when imported. The messages
themselves are declared in those modules, but for the parts a kind's messages share with the
core's (a fenced buffer's place, a foreign read, a program's writes, a returned value), which are
here, below both; this one imports nothing of the grader's.

The text is the standard library's JSON, not msgspec's: the wire carries floats that are not
finite (a kernel's ``float("-inf")`` default, a wrapper's ``torch.full(..., -inf)``), which
msgspec's JSON would send as null. msgspec types what ``json.loads`` gave, strictly.
"""
from __future__ import annotations

import json
from typing import Any, ClassVar, Literal, Union

import msgspec

JSON = Any  # checked only for being what json.loads gives


class WireError(ValueError):
    """A message that is not what its operation allows."""


class Message(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Every message and every part of one: immutable, and an unknown field is refused."""


Number = Union[bool, int, float]  # True stays a bool, 3 an int
Value = Union[bool, int, float, tuple[int, ...]]  # a size may be several dims: batch=(4, 50)
DEVICES = Literal["cpu", "cuda", "compile"]


# ---- requests: the grader to the worker ----------------------------------------------------
class Request(Message, tag_field="op", tag=str.lower):
    """A request's ``op`` is its class name in lower case; ``REPLY`` is what it gets back when it works."""

    REPLY: ClassVar[type] = type(None)


# ---- replies: the worker to the grader -----------------------------------------------------
class Reply(Message, tag_field="reply", tag=str.lower):
    """What an operation sends back when it did its work; else it sends a :class:`Failure`."""


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


# ---- parts the core's messages and a kind's share (grader.channel.kinds): here, below both, so that
# a kind's messages and the judge's fenced buffers need not import the core's operations
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

    def __post_init__(self) -> None:
        if min(self.guard, self.nbytes) < 0 or self.guard * 2 + self.nbytes > self.total:
            raise WireError(f"BufferSpec {self.name!r}: guard {self.guard} and {self.nbytes} bytes exceed "
                            f"{self.total}")


class Crossing(Message):
    """A program loaded what another program of the launch stored (``loaded``), or stored what
    another had loaded: ``program`` is the one whose access met it, ``other`` the other one."""

    tensor: str
    index: int
    shape: tuple[int, ...]
    program: tuple[int, ...]
    other: tuple[int, ...]
    loaded: bool
    line: int | None = None
    source: str = ""


class Launched(Message):
    """How the interpreter ran one launch of a run: every program batched (in ``runs`` group runs,
    one per path the programs took), or serially, and why (``serial``)."""

    grid: tuple[int, ...]
    programs: int
    runs: int = 0
    serial: str = ""
    crossed: bool = False  # its programs read or wrote each other's elements (not atomically)


class TensorInfo(Message):
    """A value the wrapper returned: a tensor's shape and dtype, or the type of what it is instead."""

    tensor: bool
    type: str = ""
    shape: tuple[int, ...] = ()
    dtype: str = ""


# What went wrong, as the worker saw it: the one place this set is written down.
WorkerFailureKind = Literal["not_found", "signature", "exception", "compile", "out_of_bounds", "crash", "error",
                            "interpreter_limit", "race"]


class Failure(Message, tag_field="reply", tag="failure"):
    """An operation that could not do its work, as the worker saw it; the grader words it.

    ``kind``: ``not_found`` (no such name: ``defined`` lists the kernels there are),
    ``signature`` (not a kernel, or not an autograd.Function: ``reason``), ``exception``,
    ``compile`` (``config``: the autotuning config that failed), ``interpreter_limit`` (the
    interpreter cannot run what compiles: ``error`` names it), ``out_of_bounds``
    (``access``), ``race`` (``crossing``: programs of one launch read and wrote one element with
    nothing to order them), ``crash`` (the worker cannot go on, ``fatal``), or ``error`` (the worker
    itself broke: a grader bug).
    """

    kind: WorkerFailureKind
    error: str = ""
    line: int | None = None
    source: str = ""
    defined: tuple[str, ...] = ()
    reason: str = ""
    access: OutOfBoundsAccess | None = None
    config: str = ""
    fatal: bool = False
    crossing: Crossing | None = None  # kind "race": programs of a launch met at an element, out of any order

    def __post_init__(self) -> None:
        if (self.kind == "out_of_bounds") != (self.access is not None):
            raise WireError("Failure: an access comes with kind 'out_of_bounds', and only with it")
        if (self.kind == "race") != (self.crossing is not None):
            raise WireError("Failure: a crossing comes with kind 'race', and only with it")


class Ready(Message, tag_field="op", tag="ready"):
    """The worker's greeting, once it has imported torch and triton."""

    device: DEVICES

    @classmethod
    def parse(cls, header) -> "Ready":
        return _typed(_body(header), cls, "greeting")


# Every request the worker may read, registered by the module that declares it (grader.channel.wire,
# grader.channel.wire_measure, a kind's wing in grader.channel.kinds) when it is imported.
_REQUESTS: list[type[Request]] = []


def register_requests(*requests: type[Request]) -> None:
    """Let the worker read these requests too (the core's, the measurements', a kind's own: an
    autograd puzzle's record and replay). Registering one twice changes nothing."""
    for request in requests:
        if not (isinstance(request, type) and issubclass(request, Request)):
            raise TypeError(f"not a request: {request!r}")
        if request not in _REQUESTS:
            _REQUESTS.append(request)


# ---- sending and reading -------------------------------------------------------------------
def _plain(value):
    """A str or a number of a class of its own (torch.__version__, a numpy float) as the plain
    value, as json.dumps would write it; anything else cannot go on the wire."""
    for kind in (str, int, float):
        if isinstance(value, kind):
            return kind(value)
    raise TypeError(f"a value of type {type(value).__name__} cannot go on the wire")


# The CPU seconds a request may use, beside its typed fields: the worker holds itself to them
# (RLIMIT_CPU), whatever the request. Not a field of any request: every one carries it alike.
CPU_LIMIT = "cpu_limit_s"
REPLY_BYTES = "reply_bytes"  # what the reply's blobs may hold, where more than the channel's default


def _body(header):
    """A header without the protocol's blob count and the request's CPU limit."""
    return {k: v for k, v in header.items() if k not in ("blobs", CPU_LIMIT, REPLY_BYTES)} \
        if isinstance(header, dict) else header


def cpu_limit(header) -> float | None:
    """The CPU seconds a request's header allows, or None (no limit)."""
    value = header.get(CPU_LIMIT) if isinstance(header, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def reply_bytes(header, default: int) -> int:
    """The bytes a request's reply may carry: its header's allowance where it gives one."""
    value = header.get(REPLY_BYTES) if isinstance(header, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > default else default


def _typed(data, kind, what: str):
    try:
        return msgspec.convert(data, kind, strict=True)
    except msgspec.ValidationError as exc:
        if isinstance(exc.__cause__, WireError):  # a rule of __post_init__: said in its own words
            raise exc.__cause__ from None
        raise WireError(f"{what}: {exc}") from None


def convert(data, kind):
    """Plain values (dicts, lists, numbers, strings, as the worker's recording and bounds check
    write them down) as the typed ``kind``, e.g. ``convert(recorded, Program)``; else a WireError."""
    return _typed(data, kind, getattr(kind, "__name__", str(kind)))


def header(message: Message) -> dict:
    """``message`` as the JSON object that carries it (the protocol adds the blob count),
    checked as its reader will check it."""
    try:
        data = msgspec.to_builtins(message, enc_hook=_plain, str_keys=True)
    except TypeError as exc:
        raise WireError(f"{type(message).__name__}: {exc}") from None
    _typed(data, type(message), type(message).__name__)
    return data


def envelope(reply: "Reply | Failure") -> dict:
    """A reply as the JSON data its header carries (lists, not tuples), for code that reads it as a dict."""
    if not isinstance(reply, (Reply, Failure)):
        raise TypeError(f"not a reply: {type(reply).__name__}")
    return json.loads(json.dumps(header(reply)))


def parse_reply(expected: type[Reply], header) -> "Reply | Failure":
    """The reply of the request whose reply type is ``expected``: that reply or a Failure.
    Anything else is a WireError."""
    return _typed(_body(header), Union[expected, Failure], f"{expected.__name__} or Failure")


def parse_request(header) -> Request:
    """A request as the worker reads it; anything else is a WireError."""
    return _typed(_body(header), Union[tuple(_REQUESTS)], "request")
