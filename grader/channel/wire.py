"""What the grader and its worker say to each other: one typed message per operation.

:mod:`grader.channel.protocol` moves JSON headers and byte blobs; this module says what a header may
hold. Each request (``Load``, ``Run``, ``Compile``, ``Bench``, ``Profile``, ``Exit``) and each
reply (``Loaded``, ``Ran``, ``Compiled``, ``Benched``, ``Profiled``, or a ``Failure``) is a frozen
:class:`msgspec.Struct`; a puzzle kind whose cases need requests of their own declares them in
its wing, :mod:`grader.channel.kinds`, and registers them (:func:`register_requests`). A
header names its message by a tag (``op`` for a request, ``reply`` for a reply).
:func:`header` checks a message as its reader will before it is sent, so the side that sends
cannot send what the other side would not accept; the reader checks it again
(:func:`parse_request`, :func:`parse_reply`): a field that is unknown, missing or of the
wrong type, or a rule of ``__post_init__`` broken, is a :class:`WireError`.

Both sides import this module, and it imports nothing of the grader's: the worker runs
learner code, so the grader treats every reply as hostile data, and a reply that is not
what its request allows is the worker's failure, never the grader's.

What every message is, and how one is written and read, is :mod:`grader.channel.wire_format`
(its names are read here too); the messages of ``--bench`` and ``--perf`` are
:mod:`grader.channel.wire_measure`.
"""
from __future__ import annotations

import enum
from typing import ClassVar, Literal, Union

from grader.channel.wire_format import (  # noqa: F401 (this module is where the grader reads the wire's names)
    CPU_LIMIT,
    DEVICES,
    JSON,
    REPLY_BYTES,
    BufferSpec,
    Crossing,
    Failure,
    Launched,
    Message,
    Number,
    OutOfBoundsAccess,
    Ready,
    Reply,
    Request,
    TensorInfo,
    Value,
    WireError,
    WorkerFailureKind,
    convert,
    cpu_limit,
    envelope,
    header,
    parse_reply,
    parse_request,
    register_requests,
    reply_bytes,
)


class CoreWarmStep(enum.StrEnum):
    """The core's warm-up steps (grader.sandbox.warmup), by the names the zygote is asked for them:
    on its command line (``--warm``) and in a fork request. A kind's own steps are its wing's, an enum
    of its messages' module (grader.channel.kinds)."""

    INTERPRETER = "interpreter"  # Triton's interpreter's first launch
    COMPILER = "compiler"        # the sm_90 compiler's set-up
    TORCH = "torch"              # what a learner's file imports besides triton, for a compile worker


# load ---------------------------------------------------------------------------------------
class KernelParam(Message):
    name: str
    constexpr: bool


class Loaded(Reply):
    """The kernel (or autograd.Function) the file defines under the puzzle's name."""

    params: tuple[KernelParam, ...]
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
    # In the interpreter, whether hooked or not: each output some program loaded or updated atomically
    # where no store of the run had reached yet, once (the first such read seen). None: not watched (a GPU).
    unwritten_reads: tuple[EarlyRead, ...] | None = None
    crossings: tuple[Crossing, ...] = ()  # the first, where the run had one
    atomics: bool = False  # a program updated an output atomically (which may order the programs)
    trace: Trace | None = None
    heuristics: dict[str, Union[bool, int]] = {}
    launches: tuple[Launched, ...] = ()  # in the interpreter: how each launch ran


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
    serial: bool = False  # in the interpreter: one program after another, never batched (a check of the engine)


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
    ttir: str = ""  # with ``Compile.ttir``: the first variant's TTIR, for the similarity pass


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
    # The first variant's TTIR in the reply (the similarity pass fingerprints what the compiler made)
    ttir: bool = False


class Exit(Request):
    """The worker's last request: it exits without a reply."""




register_requests(Load, Run, Compile, Exit)
