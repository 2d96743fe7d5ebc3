"""What the grader and its worker say to each other: one typed message per operation.

:mod:`grader.channel.protocol` moves JSON headers and byte blobs; this module says what a header may
hold. Each request (``Load``, ``Run``, ``Compile``, ``Bench``, ``Profile``, ``Exit``) and each
reply (``Loaded``, ``Ran``, ``Compiled``, ``Benched``, ``Profiled``, or a ``Failure``) is a frozen
:class:`msgspec.Struct`; a puzzle kind whose cases need requests of their own declares them in
its wing, :mod:`grader.channel.kinds`, and registers them (:func:`register_requests`). A header names its message by a tag
(``op`` for a request, ``reply`` for a reply). :func:`header` checks a message as its reader
will before it is sent, so the side that sends cannot send what the other side would not
accept; the reader checks it again (:func:`parse_request`, :func:`parse_reply`): a field that
is unknown, missing or of the wrong type, or a rule of ``__post_init__`` broken, is a
:class:`WireError`.

Both sides import this module, and it imports nothing of the grader's: the worker runs
learner code, so the grader treats every reply as hostile data, and a reply that is not
what its request allows is the worker's failure, never the grader's.

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


# What went wrong, as the worker saw it: the one place this set is written down.
WorkerFailureKind = Literal["not_found", "signature", "exception", "compile", "out_of_bounds", "crash", "error",
                            "interpreter_limit"]


class Failure(Message, tag_field="reply", tag="failure"):
    """An operation that could not do its work, as the worker saw it; the grader words it.

    ``kind``: ``not_found`` (no such name: ``defined`` lists the kernels there are),
    ``signature`` (not a kernel, or not an autograd.Function: ``reason``), ``exception``,
    ``compile`` (``config``: the autotuning config that failed), ``interpreter_limit`` (the
    interpreter cannot run what compiles: ``error`` names it), ``out_of_bounds``
    (``access``), ``crash`` (the worker cannot go on, ``fatal``), or ``error`` (the worker
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

    def __post_init__(self) -> None:
        if (self.kind == "out_of_bounds") != (self.access is not None):
            raise WireError("Failure: an access comes with kind 'out_of_bounds', and only with it")


class Ready(Message, tag_field="op", tag="ready"):
    """The worker's greeting, once it has imported torch and triton."""

    device: DEVICES

    @classmethod
    def parse(cls, header) -> "Ready":
        return _typed(_body(header), cls, "greeting")


# load ---------------------------------------------------------------------------------------
class KernelParam(Message):
    name: str
    constexpr: bool


class Loaded(Reply):
    """The kernel (or autograd.Function) the file defines under the puzzle's name."""

    params: tuple[KernelParam, ...]
    stub: bool
    line: int | None
    provided: tuple[str, ...] = ()  # set by an autotuner's configs or heuristics, never passed
    defaults: dict[str, Number] = {}
    configs: tuple[str, ...] = ()
    heuristics: tuple[str, ...] = ()


class Load(Request):
    REPLY: ClassVar[type] = Loaded
    file: str
    kernel: str
    # The puzzle's kind, where importing the file depends on it (Helion's interpreter is switched
    # on before helion is imported); "": the object says its kind.
    kind: str = ""


# run ----------------------------------------------------------------------------------------
class Overlap(Message):
    """Two programs stored different values to one element."""

    tensor: str
    shape: tuple[int, ...]
    index: int
    programs: tuple[tuple[int, ...], ...]
    line: int | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if len(self.programs) != 2:
            raise WireError(f"Overlap: two programs, not {len(self.programs)}")


class EarlyRead(Message):
    """An output loaded before any program stored to it."""

    tensor: str
    index: int
    program: tuple[int, ...]
    shape: tuple[int, ...]
    line: int | None = None
    source: str = ""


class ForeignRead(Message):
    """In a sampled run: a program loaded an output element it had not stored itself."""

    tensor: str
    index: int
    shape: tuple[int, ...]
    program: tuple[int, ...]
    written: bool  # whether another program that ran had stored it
    line: int | None = None
    source: str = ""


class ProgramWrites(Message):
    """In a sampled run: the elements one program stored in one output (a buffer index), as
    (start, length) runs of storage offsets."""

    program: tuple[int, ...]
    buffer: int
    count: int
    runs: tuple[int, ...]


class SampledRun(Message):
    """What a run of a sample of the programs did: how many of how many ran, and their stores."""

    programs: int
    ran: int
    writes: tuple[ProgramWrites, ...] = ()
    foreign_reads: tuple[ForeignRead, ...] = ()
    grid: tuple[int, ...] = ()  # the launch's grid
    along: tuple[tuple[int, ...], ...] = ()  # its indices run, per axis


class TraceRecord(Message):
    program: tuple[int, ...]
    tensor: str
    op: Literal["load", "store"]
    kind: Literal["ok", "oob", "masked"]
    numel: int
    indices: tuple[int, ...]


class Trace(Message):
    """Every access of one run, for the memory-access pictures."""

    records: tuple[TraceRecord, ...]
    truncated: bool


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
    heuristics: dict[str, Union[bool, int]] = {}
    sampled: SampledRun | None = None  # only some programs ran (Run.sample)


class Ran(Reply):
    """The runs of one case, in order; each run that did not fail sent its buffers' bytes back."""

    runs: tuple[KernelRun, ...]

    def __post_init__(self) -> None:
        if not self.runs:
            raise WireError("Ran: no runs")

    @property
    def head(self) -> KernelRun:
        """The run the case's verdict is about: the first that failed, else the first."""
        return next((r for r in self.runs if r.failure is not None), self.runs[0])

    def blobs_expected(self, buffers: int) -> int:
        return buffers * sum(r.failure is None for r in self.runs)


class Run(Request):
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
    # Only the accesses are judged (the run beside a GPU): inline assembly stood in for need not
    # leave the outputs the same under two stand-ins, only keep every access in bounds under both.
    accesses_only: bool = False
    sample: int | None = None  # run a sample of the programs, drawn from this seed (a large case)


# compile ------------------------------------------------------------------------------------
class KernelStats(Message):
    """What ptxas made of one compiled variant: the figures occupancy and the ``--perf`` estimate need."""

    label: str              # the autotuning config's label; "" without configs
    registers: int          # per thread
    spill_bytes: int        # spill stores + spill loads, per thread
    shared: int             # bytes of shared memory per program
    num_warps: int
    num_stages: int
    tensor_cores: Literal["wgmma", "mma", ""]  # the matrix instructions in the PTX, if any
    # the PTX's arithmetic instructions per thread, as written (a loop's body once), of them the
    # SFU's, and its loops (backward branches): see sandbox.compile_stats.ptx_counts
    alu: int = 0
    slow: int = 0
    loops: int = 0
    loop_shared: int = 0    # shared-memory loads and stores per thread in its loops (compile_stats.loop_shared)


class Compiled(Reply):
    variants: int
    stats: tuple[KernelStats, ...] = ()  # with ``Compile.stats``: one per variant compiled


class Compile(Request):
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
    keywords: dict[str, JSON] = {}
    stage: Literal["ttir", "ttgir", "llir", "ptx", "cubin"] = "cubin"  # the last of Triton's stages to run
    # ``--perf``: ptxas's registers, spills and shared memory, per variant (stage cubin, compiled
    # again where Triton's cache answered); ``options`` (num_warps, num_stages) where no config gives them
    stats: bool = False
    options: dict[str, int] = {}
    # Code the grader was given rather than a file (Helion's Triton for a learner's kernel): the
    # worker writes it to a file of its own and compiles ``kernel`` from there; ``file`` names it.
    source: str = ""


# a value a wrapper or a kernel returned ------------------------------------------------------
class TensorInfo(Message):
    """A value the wrapper returned: a tensor's shape and dtype, or the type of what it is instead."""

    tensor: bool
    type: str = ""
    shape: tuple[int, ...] = ()
    dtype: str = ""


# bench --------------------------------------------------------------------------------------
class TensorShape(Message):
    dtype: str
    shape: tuple[int, ...]


class NamedTensor(TensorShape):
    name: str = ""


class CopyBandwidth(Message):
    gb_per_s: float
    cached: bool
    bytes: int = 0
    ms: float = 0.0
    statistic: str = ""


class CheckedCall(Message):
    """A timed call whose outputs went back to be judged: which of how many, on which input set."""

    call: int
    calls: int
    input_set: int
    outputs: tuple[TensorShape, ...]


class AuditEvent(Message):
    event: str
    file: str = ""  # the learner's file and line that raised it, where it was theirs
    line: int = 0


class BenchWatch(Message, omit_defaults=True):
    """What the worker saw while the learner's code ran (grader.sandbox.bench.guard); the grader decides."""

    tampered: tuple[str, ...] = ()   # watched names that hold another object afterwards
    switched: tuple[str, ...] = ()   # switches (grad mode, TF32, SDPA backends, modes, hooks) thrown
    threads: int = 0                 # threads that outlived a call
    thread_call: int = -1            # the first call after which one was seen (0: the first call)
    stream_changed: bool = False     # the current stream was another after a call
    l2_limit: int = 0                # the largest persisting-L2 carve-out seen, bytes
    l2_window: int = 0               # the largest access policy window seen on the stream, bytes
    audit: tuple[AuditEvent, ...] = ()
    not_plain: tuple[str, ...] = ()  # results that were not plain tensors


class BenchTiming(Message, omit_defaults=True):  # a figure a puzzle lacks is absent, not null
    """One size of the sweep: the timings, what each returned tensor is (its bytes are the
    blobs: the first call's, then each checked call's), and the watch."""

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
    wall_ms: float = 0.0      # the fastest round's median by the host's clock, to a device-wide synchronise
    calls: int = 0            # timed calls per round
    gap_ms: float = 0.0       # median over the learner's timed calls of (host clock - events)
    overhead_ms: float = 0.0  # the same gap around an empty call
    checked: tuple[CheckedCall, ...] = ()
    watch: BenchWatch | None = None

    def __post_init__(self) -> None:
        if not (self.ms > 0 and self.baseline_ms > 0):
            raise WireError(f"BenchTiming: times must be positive, got {self.ms} and {self.baseline_ms}")


class Benched(Reply):
    device: str
    copy: CopyBandwidth
    result: BenchTiming
    statistic: str
    versions: dict[str, str]

    def __post_init__(self) -> None:
        if not self.copy.gb_per_s > 0:
            raise WireError(f"Benched: copy bandwidth must be positive, got {self.copy.gb_per_s}")


class Bench(Request):
    """Time the learner's kernel (or autograd function) at one size, on the inputs the grader planned."""

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
    sets: int = 1   # input sets in the blobs, one after another (each ``inputs`` long)
    calls: int = 0  # timed calls per round; 0: as many as the worker's time per round allows
    variant: dict[str, Value] = {}  # the learner's values of the puzzle's variants: the baseline computes with them

    def __post_init__(self) -> None:
        if not 1 <= self.sets <= 4 or self.calls < 0:
            raise WireError(f"Bench: 1 to 4 input sets and calls >= 0, got {self.sets} and {self.calls}")


# ---- --perf: one size in the interpreter, every access counted ------------------------------
class AccessCount(Message):
    """The loads (or stores, or atomics) of one line of the kernel on one tensor, over the
    programs interpreted. Bytes count the lanes the mask let through; sectors are the 32-byte
    pieces of memory those lanes touched, per request (what the memory system moves)."""

    tensor: str
    op: Literal["load", "store", "atomic"]
    line: int | None
    source: str
    requests: int          # calls of the access, summed over the programs interpreted
    lanes: int             # lanes of those requests, masked or not
    active: int            # lanes the mask let through
    bytes: int             # their bytes
    sectors: int           # 32-byte sectors per request, summed
    # of the tensor, by this op, over all its lines:
    program_unique: int    # sectors each program touched at least once, summed over the programs
    union: int             # sectors any interpreted program touched
    tensor_bytes: int      # the tensor's size
    same_address: int = 0  # atomics: the most lanes that met at one address
    conflicts: int = 0     # atomics: lanes of a request whose address another lane of it had (they queue)
    fresh: int = 0         # requests that touched a sector new to their program (0: not counted)


class DotCount(Message):
    precision: Literal["fp16", "tf32", "tf32x3", "fp32", "fp8", "int8"]
    calls: int
    flops: int             # 2*M*N*K per call, summed
    shape: tuple[int, ...]  # the first call's (M, N, K)


class LaunchProfile(Message):
    """One kernel launch: its grid, the programs interpreted, and what they did. An autotuned
    launch is profiled once per config (``group`` says which launch; ``config`` which config)."""

    kernel: str
    group: int
    config: str
    grid: tuple[int, int, int]
    interpreted: int       # programs interpreted (a spread sample of the grid)
    num_warps: int
    num_stages: int
    accesses: tuple[AccessCount, ...]
    dots: tuple[DotCount, ...]
    alu: int               # lane operations (at least a warp's per warp), over the programs interpreted
    sfu: int               # of them, exp, log, sqrt, sin, cos, division
    seconds: float
    # where the compile check finds the kernel (see Compile): its path in the file, the launch's arguments
    path: tuple[str, ...] = ()
    hops: int = 0
    arguments: tuple[JSON, ...] = ()
    keywords: dict[str, JSON] = {}
    # what was sampled less than asked: programs the sample chose (``interpreted`` ran, fewer where
    # interpreting them outran the time budget), and loops of which a sample of iterations ran
    planned: int = 0
    loops_sampled: int = 0  # summed over the programs interpreted
    reductions: int = 0    # reductions and scans, over the programs interpreted


class TorchOp(Message):
    """A PyTorch operator an autograd wrapper ran outside its kernels (a GPU kernel of PyTorch's)."""

    name: str
    count: int
    bytes: int             # read and written, summed


class Profiled(Reply):
    launches: tuple[LaunchProfile, ...]
    torch_ops: tuple[TorchOp, ...] = ()
    seconds: float = 0.0
    printed: str = ""
    failure: Failure | None = None


class Profile(Request):
    """Run the learner's kernel (or autograd function) once at one size in the interpreter,
    interpreting a spread sample of each launch's programs, and count what they do. The inputs
    are made in the worker, from their shapes (a size of ``--bench`` may be gigabytes)."""

    REPLY: ClassVar[type] = Profiled
    puzzle_file: str
    file: str
    inputs: tuple[NamedTensor, ...]
    ranges: dict[str, tuple[int, int]]  # integer inputs' [low, high)
    values: dict[str, Value]
    outputs: tuple[NamedTensor, ...] = ()
    grid: tuple[int, ...] = ()
    programs: int = 16     # programs to interpret per launch (at most)
    # CPU seconds of interpreting one launch's programs, after its first two, before the sample
    # stops short (0: no limit, as the calibration counts)
    seconds: float = 0.0


class Exit(Request):
    """The worker's last request: it exits without a reply."""


# Every request the worker may read: the core's, then each kind's own, which its wing registers
# (grader.channel.kinds) when imported, as the worker's registry of kinds imports it.
_REQUESTS: list[type[Request]] = [Load, Run, Compile, Bench, Profile, Exit]


def register_requests(*requests: type[Request]) -> None:
    """Let the worker read these requests too (a kind's own: an autograd puzzle's record and
    replay). Registering one twice changes nothing."""
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


def _body(header):
    """A header without the protocol's blob count and the request's CPU limit."""
    return {k: v for k, v in header.items() if k not in ("blobs", CPU_LIMIT)} if isinstance(header, dict) else header


def cpu_limit(header) -> float | None:
    """The CPU seconds a request's header allows, or None (no limit)."""
    value = header.get(CPU_LIMIT) if isinstance(header, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


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
