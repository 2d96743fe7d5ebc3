"""The messages of ``--bench`` (time a kernel at real sizes, on a GPU) and ``--perf`` (count one
size's accesses in the interpreter): requests only those features send, registered with the
wire's format when this module is imported, as the worker's handlers and the grader's
benchmarks import it.
"""
from __future__ import annotations

from typing import ClassVar, Literal

from grader.channel.wire_format import (
    JSON,
    Failure,
    Message,
    Number,
    Reply,
    Request,
    Value,
    WireError,
    register_requests,
)


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
    """A timed call whose outputs went back to be judged: which of how many, on which input set.
    ``same_as``: the earlier call (0: the first, untimed one) on the same input set whose outputs
    were the same bytes; then none of this call's go back (three copies of a 1 GiB gradient would
    not fit one message), and its verdict is that call's."""

    call: int
    calls: int
    input_set: int
    outputs: tuple[TensorShape, ...]
    same_as: int | None = None

    def __post_init__(self) -> None:
        if self.same_as is not None and not 0 <= self.same_as < self.call:
            raise WireError(f"CheckedCall: call {self.call} cannot repeat call {self.same_as}")


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


register_requests(Bench, Profile)
